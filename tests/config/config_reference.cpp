// Prints the configuration reference tables (Markdown) generated from the
// schema; scripts/gen_config_reference.sh splices them into
// docs/configuration.md, and config_test checks that no key is missing there.
#include <cstdio>

#include "config/key_catalog.h"

int main() {
  std::fputs(nss::config::key_catalog_markdown().c_str(), stdout);
  return 0;
}
