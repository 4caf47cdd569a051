// A test that skips, run only by this directory's CMakeLists.txt (never discovered as a test of
// its own), to see the CI skip rule of tests/test_main.cc fail it.
#include "gtest/gtest.h"

TEST(SkipRuleProbe, Skips) { GTEST_SKIP() << "the probe skips on purpose"; }
