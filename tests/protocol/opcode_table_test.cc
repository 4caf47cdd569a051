#include <gtest/gtest.h>

#include "ringfuse/opcode.h"

namespace ringfuse {
namespace {

TEST(OpcodeTable, IsConsistent) { EXPECT_EQ(OpcodeTableProblem(), ""); }

TEST(OpcodeTable, CoversEveryOpcodeFrom1To53ExceptTheKernelsHoles) {
  for (uint32_t number = 1; number <= kMaxOpcode; ++number) {
    const bool hole = number == 7 || number == 19;
    EXPECT_EQ(LookupOpcode(number).has_value(), !hole) << number;
  }
  EXPECT_FALSE(LookupOpcode(0).has_value());
  EXPECT_FALSE(LookupOpcode(54).has_value());
  EXPECT_FALSE(LookupOpcode(4096).has_value());  // CUSE_INIT is not a FUSE request
}

TEST(OpcodeTable, KnowsTheNewestOpcodes) {
  EXPECT_EQ(OpcodeName(50), "SYNCFS");
  EXPECT_EQ(OpcodeName(51), "TMPFILE");
  EXPECT_EQ(OpcodeName(52), "STATX");
  EXPECT_EQ(OpcodeName(53), "COPY_FILE_RANGE_64");
  EXPECT_EQ(OpcodeName(7), "UNKNOWN");
}

TEST(OpcodeTable, MarksTheOperationsTheKernelExpectsNoAnswerTo) {
  for (uint32_t number : {2u, 36u, 41u, 42u}) {
    EXPECT_FALSE(LookupOpcode(number)->replies) << OpcodeName(number);
  }
  EXPECT_TRUE(LookupOpcode(1)->replies);
}

}  // namespace
}  // namespace ringfuse
