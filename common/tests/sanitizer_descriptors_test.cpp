// SPDX-License-Identifier: MIT
// The asan preset's sanitizers keep working in a process that is out of descriptors, as the fault
// tests make every server be (server/tests/e2e/fault_tests.cpp). Built in that preset only.
//
// Why it is a test: UBSan's vptr check needs a pipe() to read a vtable (cmake/pools.cmake says
// more), so with it on, the first virtual call on a new type in a process without a free
// descriptor is reported as "invalid vptr" and aborts this program. The preset turns that check
// off; this test fails if it comes back on.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <vector>

namespace {

struct shape {
  shape() = default;
  shape(const shape&) = delete;
  shape& operator=(const shape&) = delete;
  virtual ~shape() = default;
  virtual int corners() const { return 0; }
};

struct square final : shape {
  int corners() const override { return 4; }
};

/// Holds every descriptor the (lowered) soft limit allows, and gives them and the limit back.
class out_of_descriptors {
 public:
  out_of_descriptors() {
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &saved_) == 0);
    rlimit low = saved_;
    low.rlim_cur = 64;  // a few dozen opens, not a million
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &low) == 0);
    for (int fd = 0; (fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) held_.push_back(fd);
    errno_ = errno;
  }
  out_of_descriptors(const out_of_descriptors&) = delete;
  out_of_descriptors& operator=(const out_of_descriptors&) = delete;
  ~out_of_descriptors() {
    for (const int fd : held_) ::close(fd);
    ::setrlimit(RLIMIT_NOFILE, &saved_);
  }
  int open_errno() const noexcept { return errno_; }

 private:
  rlimit saved_{};
  std::vector<int> held_;
  int errno_ = 0;
};

}  // namespace

TEST_CASE("out of descriptors, a first virtual call and a virtual destructor run under the sanitizers") {
  int corners = 0;
  {
    const out_of_descriptors full;
    REQUIRE(full.open_errno() == EMFILE);
    int ends[2] = {-1, -1};
    CHECK(::pipe(ends) == -1);  // what the vptr check would need
    const std::unique_ptr<shape> s = std::make_unique<square>();
    corners = s->corners();  // the first call on `square` in this process
  }
  CHECK(corners == 4);
}
