//===- SettingsTest.cpp - the one reader of STRATA_* variables ------------===//
//
// strata/Runtime/Settings.h: the parsers accept what docs/environment.md
// documents and fall back, with one warning naming the variable, on what
// it does not; accessors read once, except those documented as read on
// each call (fault injection, the bounds a reset re-reads).
//
//===----------------------------------------------------------------------===//
#include "strata/Runtime/Settings.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace settings = strata::runtime::settings;
namespace parse = strata::runtime::settings::parse;

namespace {

/// What `fn` printed on stderr.
template <typename F> std::string stderrOf(F fn) {
  testing::internal::CaptureStderr();
  fn();
  return testing::internal::GetCapturedStderr();
}

TEST(SettingsParse, IntegersAreWholeDecimalNumbersAtLeastTheMinimum) {
  EXPECT_EQ(parse::integer("STRATA_X", "12", 1, 7), 12);
  EXPECT_EQ(parse::integer("STRATA_X", "0", 0, 7), 0);
  EXPECT_EQ(parse::integer("STRATA_X", nullptr, 1, 7), 7);
  EXPECT_EQ(parse::integer("STRATA_X", "", 1, 7), 7);
  std::string err = stderrOf([] {
    EXPECT_EQ(parse::integer("STRATA_X", "12abc", 1, 7), 7);
    EXPECT_EQ(parse::integer("STRATA_X", "0", 1, 7), 7);
    EXPECT_EQ(parse::integer("STRATA_X", "-3", 0, 7), 7);
    EXPECT_EQ(parse::integer("STRATA_X", "99999999999999999999", 1, 7), 7);
  });
  EXPECT_NE(err.find("strata: warning: STRATA_X='12abc' is not a positive "
                     "integer; using 7 (docs/environment.md)"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("STRATA_X='-3' is not a non-negative integer"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("STRATA_X='99999999999999999999'"), std::string::npos)
      << err;
}

TEST(SettingsParse, ByteSizesTakeBinarySuffixes) {
  EXPECT_EQ(parse::byteSize("STRATA_Y", "512M", 1), int64_t(512) << 20);
  EXPECT_EQ(parse::byteSize("STRATA_Y", "2G", 1), int64_t(2) << 30);
  EXPECT_EQ(parse::byteSize("STRATA_Y", "64K", 1), int64_t(64) << 10);
  EXPECT_EQ(parse::byteSize("STRATA_Y", "1048576", 1), 1048576);
  EXPECT_EQ(parse::byteSize("STRATA_Y", nullptr, 5), 5);
  std::string err = stderrOf([] {
    EXPECT_EQ(parse::byteSize("STRATA_Y", "lots", 5), 5);
    EXPECT_EQ(parse::byteSize("STRATA_Y", "-5M", 5), 5);
    EXPECT_EQ(parse::byteSize("STRATA_Y", "5Q", 0), 0);
    EXPECT_EQ(parse::byteSize("STRATA_Y", "5MB", 0), 0);
  });
  EXPECT_NE(err.find("STRATA_Y='lots' is not a byte count such as 512M, 2G "
                     "or 1048576; using 5 bytes"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("STRATA_Y='5Q' is not a byte count such as 512M, 2G or "
                     "1048576; using no limit"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("STRATA_Y='5MB'"), std::string::npos) << err;
}

TEST(SettingsParse, AWarningIsPrintedOncePerValue) {
  std::string err = stderrOf([] {
    for (int i = 0; i < 3; ++i)
      parse::integer("STRATA_ONCE", "x", 1, 2);
  });
  EXPECT_EQ(err, parse::warning("STRATA_ONCE", "x", "a positive integer", "2") +
                     "\n");
}

TEST(SettingsParse, FlagsReadTheUsualWordsAndWarnOnOthers) {
  EXPECT_TRUE(parse::flag("STRATA_F", nullptr, true));
  EXPECT_FALSE(parse::flag("STRATA_F", nullptr, false));
  EXPECT_FALSE(parse::flag("STRATA_F", "", false));
  EXPECT_FALSE(parse::flag("STRATA_F", "0", true));
  EXPECT_TRUE(parse::flag("STRATA_F", "1", false));
  EXPECT_TRUE(parse::flag("STRATA_F", "yes", false));
  EXPECT_TRUE(parse::flag("STRATA_F", "ON", false));
  // A word for false is false (it used to be true: anything but "0").
  EXPECT_FALSE(parse::flag("STRATA_F", "false", true));
  EXPECT_FALSE(parse::flag("STRATA_F", "Off", true));
  EXPECT_FALSE(parse::flag("STRATA_F", "no", true));
  testing::internal::CaptureStderr();
  EXPECT_TRUE(parse::flag("STRATA_FLAG_TYPO", "flase", true));
  EXPECT_FALSE(parse::flag("STRATA_FLAG_TYPO", "flase", false));
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("STRATA_FLAG_TYPO"), std::string::npos) << err;
  EXPECT_NE(err.find("flase"), std::string::npos) << err;
}

TEST(Settings, FaultInjectionIsReadOnEachCall) {
  ::setenv("STRATA_INJECT_COMPILE_FAILURE", "1", 1);
  EXPECT_TRUE(settings::injectCompileFailure());
  ::setenv("STRATA_INJECT_COMPILE_FAILURE", "0", 1);
  EXPECT_FALSE(settings::injectCompileFailure());
  ::unsetenv("STRATA_INJECT_COMPILE_FAILURE");
  EXPECT_FALSE(settings::injectCompileFailure());
  ::setenv("STRATA_DYNAMIC_SHAPES", "0", 1);
  EXPECT_FALSE(settings::dynamicShapes());
  ::unsetenv("STRATA_DYNAMIC_SHAPES");
  EXPECT_TRUE(settings::dynamicShapes());
  ::setenv("STRATA_INJECT_NVRTC_FAILURE", "yes", 1);
  EXPECT_TRUE(settings::injectNvrtcFailure());
  ::unsetenv("STRATA_INJECT_NVRTC_FAILURE");
  EXPECT_FALSE(settings::injectNvrtcFailure());
}

TEST(Settings, CacheBoundsAreReadOnEachCall) {
  ::setenv("STRATA_CACHE_MAX_BYTES", "3M", 1);
  EXPECT_EQ(settings::cacheMaxBytes(), int64_t(3) << 20);
  ::setenv("STRATA_KERNEL_CACHE_SIZE", "17", 1);
  EXPECT_EQ(settings::kernelCacheSize(), 17);
  std::string err = stderrOf([] {
    ::setenv("STRATA_CACHE_MAX_BYTES", "huge", 1);
    EXPECT_EQ(settings::cacheMaxBytes(), int64_t(1) << 30);
    ::setenv("STRATA_KERNEL_CACHE_SIZE", "-1", 1);
    EXPECT_EQ(settings::kernelCacheSize(), 4096);
  });
  EXPECT_NE(err.find("STRATA_CACHE_MAX_BYTES='huge'"), std::string::npos);
  EXPECT_NE(err.find("STRATA_KERNEL_CACHE_SIZE='-1' is not a positive "
                     "integer; using 4096"),
            std::string::npos);
  ::unsetenv("STRATA_CACHE_MAX_BYTES");
  ::unsetenv("STRATA_KERNEL_CACHE_SIZE");
  EXPECT_EQ(settings::cacheMaxBytes(), int64_t(1) << 30);
  EXPECT_EQ(settings::kernelCacheSize(), 4096);
}

// Nothing else in this binary reads STRATA_SEGMENT_OPS or STRATA_DEBUG, so
// these tests' setenv comes before the first (and only) read.
TEST(Settings, ABadValueFallsBackToTheDefaultAndIsReadOnce) {
  ::setenv("STRATA_SEGMENT_OPS", "many", 1);
  std::string err = stderrOf([] { EXPECT_EQ(settings::segmentOps(), 128); });
  EXPECT_NE(err.find("STRATA_SEGMENT_OPS='many' is not a positive integer; "
                     "using 128"),
            std::string::npos)
      << err;
  ::setenv("STRATA_SEGMENT_OPS", "4", 1);
  EXPECT_EQ(settings::segmentOps(), 128); // parsed once, on first use
  ::unsetenv("STRATA_SEGMENT_OPS");
}

TEST(Settings, DebugLevelIsParsedOnce) {
  ::setenv("STRATA_DEBUG", "3", 1);
  EXPECT_EQ(settings::debugLevel(), 3);
  ::setenv("STRATA_DEBUG", "1", 1);
  EXPECT_EQ(settings::debugLevel(), 3);
  ::unsetenv("STRATA_DEBUG");
}

TEST(Settings, LibrariesHaveTheirDocumentedDefaults) {
  // Read once: the test's environment is what ctest gives it.
  if (!std::getenv("STRATA_BLAS")) {
    EXPECT_EQ(settings::blasLibrary(), "libopenblas.so.0");
  }
  if (!std::getenv("STRATA_NCCL_LIBRARY")) {
    EXPECT_EQ(settings::ncclLibrary(), "libnccl.so.2");
  }
  ::setenv("STRATA_NCCL_LIBRARY", "libnccl-test.so", 1);
  EXPECT_EQ(settings::ncclLibrary(), "libnccl-test.so");
  ::unsetenv("STRATA_NCCL_LIBRARY");
  ::setenv("STRATA_GLOO_HOSTNAME", "10.0.0.1", 1);
  EXPECT_EQ(settings::glooHostname(), std::optional<std::string>("10.0.0.1"));
  ::unsetenv("STRATA_GLOO_HOSTNAME");
  EXPECT_EQ(settings::glooHostname(), std::nullopt);
}

} // namespace
