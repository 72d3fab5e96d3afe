// What a run computes on, for the components that decide by it without
// libtorch (the configuration's compute dtype, the preflight's checks).
#pragma once

namespace nss {

enum class DeviceKind { kCpu, kCuda };

/// "cpu" or "cuda".
inline const char* device_name(DeviceKind device) {
  return device == DeviceKind::kCuda ? "cuda" : "cpu";
}

}  // namespace nss
