// A token file that shrinks under the mapping (truncated, rewritten in place)
// is a DataError naming it, on the caller's thread and on loader workers, and
// the process goes on; a file replaced by rename is not noticed (the mapping
// keeps the old inode). A SIGBUS outside a guarded copy still ends the
// process through the disposition that was there before.
#include "data/mapping_guard.h"

#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/error.h"
#include "data/data_loader.h"
#include "data/token_dataset.h"
#include "data/token_file_writer.h"
#include "support/test_paths.h"

namespace nss::data {
namespace {

constexpr std::int64_t kTokens = std::int64_t{1} << 20;  // 2 MiB of uint16: many pages

// Token i is i % 251 (+ `shift`), every one a target, in documents of 1024
// tokens: /tokens, /loss_mask and /document_offsets all live in the mapping.
void write_dataset(const std::string& path, std::int64_t shift = 0) {
  std::vector<std::int64_t> ids(static_cast<std::size_t>(kTokens));
  for (std::int64_t i = 0; i < kTokens; ++i) ids[i] = i % 251 + shift;
  const std::vector<std::uint8_t> mask(1024, 1);
  TokenFileWriter writer(path, DType::kUInt16, kTokens, /*with_loss_mask=*/true);
  for (std::int64_t first = 0; first < kTokens; first += 1024) {
    writer.append(ids.data() + first, 1024, mask.data());
    writer.end_document();
  }
  writer.commit({});
}

// Runs `body`, expecting a DataError that names `path` and says it shrank.
template <class Body>
void expect_shrunk(const std::string& path, Body body) {
  try {
    body();
    ADD_FAILURE() << "reading the truncated " << path << " did not fail";
  } catch (const DataError& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("token dataset " + path + " shrank under the running job"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("rename it into place"), std::string::npos) << text;
  }
}

class MappingGuardTest : public ::testing::Test {
 protected:
  std::string path_ = nss::testing::scratch_dir("mapping_guard") + "/train.h5";
  void SetUp() override { write_dataset(path_); }
};

TEST_F(MappingGuardTest, TruncatedFileIsADataErrorNamingItAndTheProcessGoesOn) {
  const auto dataset = TokenDataset::open(path_);
  ASSERT_EQ(::truncate(path_.c_str(), 4096), 0);
  std::vector<std::int64_t> out(16);
  std::vector<std::uint8_t> mask(16);
  // Twice: after the first fault SIGBUS must be usable again on this thread.
  for (int round = 0; round < 2; ++round) {
    expect_shrunk(path_, [&] { dataset->read(kTokens - 16, 16, out.data()); });
    expect_shrunk(path_, [&] { dataset->read_loss_mask(kTokens - 16, 16, mask.data()); });
    expect_shrunk(path_, [&] { dataset->document_offset(dataset->num_documents()); });
  }
}

TEST_F(MappingGuardTest, LoaderWorkersTurnTheFaultIntoTheConsumersDataError) {
  const auto dataset = TokenDataset::open(path_);
  DataLoaderOptions options;
  options.sampling = {64, 8, 2, 0, 1, 3};
  options.num_workers = 3;
  options.prefetch_factor = 2;
  DataLoader loader(dataset, options);
  EXPECT_EQ(loader.next().rows, 2);
  ASSERT_EQ(::truncate(path_.c_str(), 0), 0);
  // The micro-batches already queued may still arrive; then the workers' fault.
  expect_shrunk(path_, [&] {
    for (int i = 0; i < 100; ++i) loader.next();
  });
}

TEST_F(MappingGuardTest, FileReplacedByRenameKeepsReadingTheOldOne) {
  const auto dataset = TokenDataset::open(path_);
  const std::string replacement = path_ + ".new";
  write_dataset(replacement, /*shift=*/1);
  ASSERT_EQ(std::rename(replacement.c_str(), path_.c_str()), 0);
  std::vector<std::int64_t> out(16);
  dataset->read(kTokens - 16, 16, out.data());
  for (std::int64_t i = 0; i < 16; ++i) EXPECT_EQ(out[i], (kTokens - 16 + i) % 251);
  std::vector<std::int64_t> fresh(16);
  TokenDataset::open(path_)->read(kTokens - 16, 16, fresh.data());
  EXPECT_EQ(fresh[0], out[0] + 1);
}

// A mapping of a file truncated to nothing: touching it is a real SIGBUS.
const volatile char* lost_page() {
  const std::string path = nss::testing::scratch_dir("mapping_guard") + "/lost";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0 || ::ftruncate(fd, 4096) != 0) return nullptr;
  void* page = ::mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, 0);
  if (page == MAP_FAILED || ::ftruncate(fd, 0) != 0) return nullptr;
  return static_cast<const volatile char*>(page);
}

// The guard's handler, installed by a first guarded copy.
void install_guard() {
  char byte = 0;
  auto copy = [&] { byte = 1; };
  copy_from_mapping(&byte, 1, copy);
}

// Death tests re-run the test in a fresh process: the guard is installed there
// over the disposition each test sets up first.
class MappingGuardDeathTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(MappingGuardDeathTest, FaultOutsideAGuardedCopyStillCrashes) {
  EXPECT_EXIT(
      {
        install_guard();
        const volatile char* page = lost_page();
        if (page) std::printf("%d", page[0]);
      },
      ::testing::KilledBySignal(SIGBUS), "");
}

TEST_F(MappingGuardDeathTest, SigbusSentByKillStillCrashes) {
  EXPECT_EXIT(
      {
        install_guard();
        std::raise(SIGBUS);
      },
      ::testing::KilledBySignal(SIGBUS), "");
}

TEST_F(MappingGuardDeathTest, FaultOutsideAGuardedCopyReachesThePreviousHandler) {
  EXPECT_EXIT(
      {
        std::signal(SIGBUS, [](int) { ::_exit(42); });
        install_guard();
        const volatile char* page = lost_page();
        if (page) std::printf("%d", page[0]);
      },
      ::testing::ExitedWithCode(42), "");
}

TEST_F(MappingGuardDeathTest, FaultInAGuardedCopyOfAnotherRangeStillCrashes) {
  EXPECT_EXIT(
      {
        const volatile char* page = lost_page();
        char elsewhere = 0;
        auto copy = [&] {
          if (page) std::printf("%d", page[0]);
        };
        copy_from_mapping(&elsewhere, 1, copy);
      },
      ::testing::KilledBySignal(SIGBUS), "");
}

}  // namespace
}  // namespace nss::data
