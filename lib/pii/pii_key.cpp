#include "pii/pii_key.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/fs.h"
#include "core/output_location.h"
#include "core/sha256.h"

namespace nss::pii {
namespace {

constexpr const char* kComponent = "pii";
// The 64 digits, a newline and one byte more: enough to tell a longer file.
constexpr std::size_t kMostBytesRead = 66;

std::string_view key_view(const SecretBytes& bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// At most kMostBytesRead bytes of the regular file `path`, checked first.
std::string read_key_text(const std::string& path) {
  const std::string keep =
      "keep the key file nss_prepare_data created, or give --pii-key a new "
      "path to create one (other surrogates than before)";
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0)
    throw DataError(kComponent, "cannot read the PII key " + path + ": " + errno_text(errno), keep);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
    throw DataError(kComponent, "the PII key " + path + " is not a regular file",
                    "give --pii-key a key file (64 hex digits) or a new path to create one");
  if ((st.st_mode & 077) != 0)
    throw DataError(kComponent,
                    "the PII key " + path + " is readable or writable by others (mode " +
                        std::to_string((st.st_mode >> 6) & 7) +
                        std::to_string((st.st_mode >> 3) & 7) + std::to_string(st.st_mode & 7) +
                        "): whoever reads it can test guesses against the hashed values",
                    "chmod 600 " + path);
  std::string text(kMostBytesRead, '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      throw DataError(kComponent, "cannot read the PII key " + path + ": " + errno_text(errno),
                      keep);
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  text.resize(got);
  if (got == kMostBytesRead)
    throw DataError(
        kComponent,
        "the PII key " + path + " is longer than a key file (64 hex digits and a newline)", keep);
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

}  // namespace

PiiKey PiiKey::from_random_device(const std::string& device) {
  return PiiKey(read_secret_bytes(
      device, kComponent,
      "a new PII key is drawn from the kernel's random device; run where " + device +
          " is a readable character device, or give --pii-key an existing key file"));
}

PiiKey PiiKey::from_hex(std::string_view hex, const std::string& origin) {
  const ParsedSecret parsed = parse_secret_hex(hex);
  if (!parsed.bytes)
    throw DataError(kComponent, "the PII key " + origin + " " + parsed.problem,
                    "restore the key file nss_prepare_data created (64 lowercase hex digits and "
                    "a newline), or give --pii-key a new path to create one");
  return PiiKey(*parsed.bytes);
}

PiiKey::PiiKey(const SecretBytes& bytes) : bytes_(bytes), hmac_(key_view(bytes)) {}

std::array<std::uint8_t, 32> PiiKey::mac(std::string_view message) const {
  return hmac_.mac(message);
}

std::string PiiKey::id() const {
  return secret_bytes_hex(mac("nss-pii/v1/key-id")).substr(0, 16);
}

std::string PiiKey::file_text() const {
  return secret_bytes_hex(bytes_) + "\n";
}

PiiKey read_key_file(const std::string& path) {
  return PiiKey::from_hex(read_key_text(path), path);
}

PiiKey read_or_create_key_file(const std::string& path, bool& created) {
  struct stat st {};
  created = false;
  if (::lstat(path.c_str(), &st) == 0 || errno != ENOENT) return read_key_file(path);
  const PiiKey key = PiiKey::from_random_device();
  OutputTarget target;
  target.path = path;
  target.component = kComponent;
  target.option = "--pii-key";
  target.private_data = true;
  try {
    write_output_file(target, key.file_text());
  } catch (const UsageError&) {
    // Another preparation created it meanwhile: use that key, as it does.
    if (::lstat(path.c_str(), &st) == 0) return read_key_file(path);
    throw;
  }
  created = true;
  return key;
}

}  // namespace nss::pii
