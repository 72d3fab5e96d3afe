// The dataloader at 1, 2 and 4 real ranks: every global batch is covered
// exactly once by the ranks together, identical to a one-rank reference, and a
// resume from a position saved at another world size continues identically.
#include <gtest/gtest.h>
#include <mpi.h>

#include "data/data_loader.h"
#include "data/token_file_writer.h"
#include "support/mpi_world.h"
#include "support/test_paths.h"

namespace nss::data {
namespace {

using testing::world_rank;
using testing::world_size;

// Every rank writes its own copy (no shared scratch directory is assumed).
std::shared_ptr<const TokenDataset> dataset() {
  const std::string path = nss::testing::scratch_dir("data_mpi") + "/tokens.h5";
  std::vector<std::int64_t> ids(16 * 100 + 1);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int64_t>(i % 65000);
  TokenFileWriter writer(path, DType::kUInt16, static_cast<std::int64_t>(ids.size()));
  writer.append(ids.data(), static_cast<std::int64_t>(ids.size()));
  writer.commit({});
  return TokenDataset::open(path);
}

DataLoaderOptions options(std::int64_t rank, std::int64_t world, LoaderPosition start = {},
                          std::int64_t first_step = 0) {
  DataLoaderOptions o;
  o.sampling = {/*seq_len=*/16, /*global_batch_size=*/8, /*micro_batch_size=*/1, rank,
                world,
                /*seed=*/2024};
  o.num_workers = 2;
  o.prefetch_factor = 2;
  o.start = start;
  o.first_step = first_step;
  return o;
}

// The samples of `steps` global batches gathered from every rank, in rank order.
std::vector<std::vector<std::int64_t>> gathered_steps(DataLoader& loader, int steps) {
  std::vector<std::vector<std::int64_t>> result;
  const std::int64_t per_rank = loader.plan().rank_batch_size();
  for (int s = 0; s < steps; ++s) {
    std::vector<std::int64_t> mine;
    for (std::int64_t m = 0; m < loader.plan().accumulation_steps(); ++m) {
      const MicroBatch micro = loader.next();
      EXPECT_EQ(micro.micro_step, m);
      mine.insert(mine.end(), micro.sample_ids.begin(), micro.sample_ids.end());
    }
    std::vector<std::int64_t> all(static_cast<std::size_t>(per_rank * world_size()));
    MPI_Allgather(mine.data(), static_cast<int>(per_rank), MPI_INT64_T, all.data(),
                  static_cast<int>(per_rank), MPI_INT64_T, MPI_COMM_WORLD);
    result.push_back(all);
  }
  return result;
}

TEST(DataLoaderMpi, RanksTogetherCoverEachGlobalBatchExactlyOnce) {
  const auto data = dataset();
  DataLoader reference(data, options(0, 1));
  std::vector<std::vector<std::int64_t>> expected;
  for (int s = 0; s < 30; ++s) {  // 100 windows / 8 = 12 batches per epoch: crosses two epochs
    std::vector<std::int64_t> batch;
    for (int m = 0; m < 8; ++m) batch.push_back(reference.next().sample_ids[0]);
    expected.push_back(batch);
  }
  DataLoader loader(data, options(world_rank(), world_size()));
  EXPECT_EQ(gathered_steps(loader, 30), expected);
}

TEST(DataLoaderMpi, ResumeFromAPositionSavedAtAnotherWorldSize) {
  const auto data = dataset();
  DataLoader uninterrupted(data, options(0, 1));
  for (int i = 0; i < 8 * 13; ++i) uninterrupted.next();
  const LoaderPosition saved = uninterrupted.resume_position();  // one rank, after 13 steps
  std::vector<std::vector<std::int64_t>> expected;
  for (int s = 0; s < 10; ++s) {
    std::vector<std::int64_t> batch;
    for (int m = 0; m < 8; ++m) batch.push_back(uninterrupted.next().sample_ids[0]);
    expected.push_back(batch);
  }
  DataLoader resumed(data, options(world_rank(), world_size(), saved, 13));
  EXPECT_EQ(gathered_steps(resumed, 10), expected);
}

}  // namespace
}  // namespace nss::data
