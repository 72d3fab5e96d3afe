#include "h5/id.h"

#include "h5/errors.h"

namespace nss::h5 {

herr_t Id::close() {
  if (id_ < 0) return 0;
  const hid_t id = std::exchange(id_, H5I_INVALID_HID);
  switch (H5Iget_type(id)) {
    case H5I_FILE:
      return H5Fclose(id);
    case H5I_GROUP:
      return H5Gclose(id);
    case H5I_DATASET:
      return H5Dclose(id);
    case H5I_DATASPACE:
      return H5Sclose(id);
    case H5I_DATATYPE:
      return H5Tclose(id);
    case H5I_ATTR:
      return H5Aclose(id);
    case H5I_GENPROP_LST:
      return H5Pclose(id);
    default:
      return H5Idec_ref(id);
  }
}

void Id::reset() {
  if (id_ < 0) return;
  QuietErrors quiet;
  if (close() < 0) H5Eclear2(H5E_DEFAULT);
}

}  // namespace nss::h5
