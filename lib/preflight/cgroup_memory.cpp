#include "preflight/cgroup_memory.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "core/units.h"

namespace nss::preflight {
namespace {

// The kernel reports "no limit" as "max" (v2) or as PAGE_COUNTER_MAX rounded
// to pages, about 2^63 (v1); anything this large is not a real limit.
constexpr std::uint64_t kUnlimited = std::uint64_t{1} << 62;

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

std::optional<std::uint64_t> parse_count(const std::string& text) {
  const std::string value = trim(text);
  if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::strtoull(value.c_str(), nullptr, 10);
}

// A limit file's value: nullopt for "max", unreadable or effectively unlimited.
std::optional<std::uint64_t> parse_limit(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  const auto value = parse_count(*text);
  if (!value || *value >= kUnlimited) return std::nullopt;
  return value;
}

// One key of a memory.stat file ("key value" lines).
std::optional<std::uint64_t> stat_value(const std::string& stat, const std::string& key) {
  std::istringstream lines(stat);
  std::string name, value;
  while (lines >> name >> value)
    if (name == key) return parse_count(value);
  return std::nullopt;
}

// mountinfo escapes space, tab, newline and backslash as \ooo octal.
std::string unescape(const std::string& field) {
  std::string out;
  for (std::size_t i = 0; i < field.size(); ++i) {
    const auto octal = [&](std::size_t k) { return field[k] >= '0' && field[k] <= '7'; };
    if (field[i] == '\\' && i + 3 < field.size() && octal(i + 1) && octal(i + 2) && octal(i + 3)) {
      out += static_cast<char>(std::strtol(field.substr(i + 1, 3).c_str(), nullptr, 8));
      i += 3;
    } else {
      out += field[i];
    }
  }
  return out;
}

bool has_token(const std::string& list, const std::string& token) {
  std::istringstream items(list);
  std::string item;
  while (std::getline(items, item, ','))
    if (item == token) return true;
  return false;
}

std::string parent_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

struct LevelReading {
  std::uint64_t limit = 0, usage = 0, reclaimable = 0;
  const char* limit_name = "";
};

std::optional<LevelReading> read_level(const SystemRoot& root, const std::string& level,
                                       int version) {
  LevelReading reading;
  const std::string stat = read_small_file(root.path(level + "/memory.stat")).value_or("");
  std::optional<std::uint64_t> limit, usage;
  if (version == 2) {
    limit = parse_limit(read_small_file(root.path(level + "/memory.max")));
    usage = parse_count(read_small_file(root.path(level + "/memory.current")).value_or(""));
    reading.limit_name = "memory.max";
    reading.reclaimable = stat_value(stat, "inactive_file").value_or(0);
  } else {
    limit = parse_limit(read_small_file(root.path(level + "/memory.limit_in_bytes")));
    reading.limit_name = "memory.limit_in_bytes";
    // v1 reports the limit inherited from ancestors the container cannot see.
    const auto inherited = stat_value(stat, "hierarchical_memory_limit");
    if (inherited && *inherited < kUnlimited && (!limit || *inherited < *limit)) {
      limit = inherited;
      reading.limit_name = "hierarchical_memory_limit";
    }
    usage = parse_count(read_small_file(root.path(level + "/memory.usage_in_bytes")).value_or(""));
    reading.reclaimable = stat_value(stat, "total_inactive_file")
                              .value_or(stat_value(stat, "inactive_file").value_or(0));
  }
  if (!limit) return std::nullopt;
  reading.limit = *limit;
  reading.usage = usage.value_or(0);
  reading.reclaimable = std::min(reading.reclaimable, reading.usage);
  return reading;
}

}  // namespace

CgroupMembership parse_proc_cgroup(const std::string& text) {
  CgroupMembership membership;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const auto first = line.find(':');
    const auto second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string id = line.substr(0, first);
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = trim(line.substr(second + 1));
    if (id == "0" && controllers.empty()) membership.v2_path = path;
    if (has_token(controllers, "memory")) membership.v1_memory_path = path;
  }
  return membership;
}

CgroupMounts parse_mountinfo(const std::string& text) {
  CgroupMounts mounts;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const auto separator = line.find(" - ");
    if (separator == std::string::npos) continue;
    std::istringstream before(line.substr(0, separator));
    std::istringstream after(line.substr(separator + 3));
    std::string id, parent, device, root, mount_point, fstype, source, options;
    if (!(before >> id >> parent >> device >> root >> mount_point)) continue;
    if (!(after >> fstype >> source)) continue;
    after >> options;
    const CgroupMount mount{unescape(root), unescape(mount_point)};
    if (fstype == "cgroup2" && !mounts.v2) mounts.v2 = mount;
    if (fstype == "cgroup" && has_token(options, "memory") && !mounts.v1_memory)
      mounts.v1_memory = mount;
  }
  return mounts;
}

std::optional<std::string> cgroup_directory(const CgroupMount& mount,
                                            const std::string& cgroup_path) {
  const std::string root = mount.root == "/" ? "" : mount.root;
  if (cgroup_path.compare(0, root.size(), root) != 0) return std::nullopt;
  const std::string rest = cgroup_path.substr(root.size());
  if (!rest.empty() && rest[0] != '/') return std::nullopt;
  std::string dir = mount.mount_point + (rest == "/" ? "" : rest);
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

std::optional<MemoryLimit> cgroup_headroom(const SystemRoot& root, const std::string& directory,
                                           const std::string& top, int version) {
  std::optional<MemoryLimit> tightest;
  std::string level = directory;
  while (true) {
    if (const auto reading = read_level(root, level, version)) {
      const std::uint64_t in_use = reading->usage - reading->reclaimable;
      const std::uint64_t headroom = reading->limit > in_use ? reading->limit - in_use : 0;
      if (!tightest || headroom < tightest->bytes) {
        tightest = MemoryLimit{
            "cgroup v" + std::to_string(version) + " " + level, headroom,
            std::string(reading->limit_name) + " " + format_bytes(reading->limit) + " - in use " +
                format_bytes(in_use) + " (" + format_bytes(reading->reclaimable) +
                " reclaimable page cache not counted)"};
      }
    }
    if (level == top || level.size() <= top.size() || level == "/") break;
    level = parent_of(level);
  }
  return tightest;
}

std::vector<MemoryLimit> read_cgroup_limits(const SystemRoot& root,
                                            std::vector<std::string>& notes) {
  std::vector<MemoryLimit> limits;
  const auto cgroup_text = read_small_file(root.path("/proc/self/cgroup"));
  const auto mountinfo_text = read_small_file(root.path("/proc/self/mountinfo"));
  if (!cgroup_text || !mountinfo_text) {
    notes.push_back("cgroup: cannot read /proc/self/cgroup or /proc/self/mountinfo");
    return limits;
  }
  const CgroupMembership membership = parse_proc_cgroup(*cgroup_text);
  const CgroupMounts mounts = parse_mountinfo(*mountinfo_text);
  const auto add = [&](const std::optional<CgroupMount>& mount, const std::string& path,
                       int version) {
    if (!mount || path.empty()) return;
    const auto dir = cgroup_directory(*mount, path);
    if (!dir) {
      // Our cgroup is outside the mounted part of the hierarchy (a container
      // without its own cgroup namespace); the mount's top level still binds.
      notes.push_back("cgroup v" + std::to_string(version) + ": " + path + " is not under the " +
                      "mount at " + mount->mount_point + "; using that mount's limit");
    }
    const std::string directory = dir.value_or(mount->mount_point);
    if (auto limit = cgroup_headroom(root, directory, mount->mount_point, version))
      limits.push_back(std::move(*limit));
  };
  add(mounts.v2, membership.v2_path, 2);
  add(mounts.v1_memory, membership.v1_memory_path, 1);
  return limits;
}

}  // namespace nss::preflight
