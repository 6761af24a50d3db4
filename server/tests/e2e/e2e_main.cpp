// SPDX-License-Identifier: MIT
// server_e2e --server=PATH [doctest options]: the end-to-end tests of one server_<name>.
// pools_add_server() registers it as ctest server_e2e_<name> for every driver.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "server_process.hpp"

int main(int argc, char** argv) {
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    const std::string_view arg(argv[i]);
    if (arg.starts_with("--server="))
      e2e::set_server_path(std::string(arg.substr(9)));
    else
      rest.push_back(argv[i]);
  }
  if (e2e::server_path().empty()) {
    std::fprintf(stderr, "usage: server_e2e --server=PATH/server_<name> [doctest options]\n");
    return 2;
  }
  doctest::Context context(static_cast<int>(rest.size()), rest.data());
  return context.run();
}
