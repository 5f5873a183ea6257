// One version number: oprt_version() of the library is the project(VERSION) of
// CMakeLists.txt, as configured into operator_runtime/version.h (the header
// that is installed with the CMake package, whose version file is written from
// the same PROJECT_VERSION). tests/test_packaging.py checks the Python side.
#include <gtest/gtest.h>

#include <cctype>
#include <string>

#include "operator_runtime/operator_runtime.h"
#include "operator_runtime/version.h"

namespace {

TEST(Version, LibraryMatchesTheConfiguredHeader) {
    const char *version = oprt_version();
    ASSERT_NE(version, nullptr);
    EXPECT_STREQ(version, OPRT_VERSION_STRING);
    const std::string parts = std::to_string(OPRT_VERSION_MAJOR) + "." +
                              std::to_string(OPRT_VERSION_MINOR) + "." +
                              std::to_string(OPRT_VERSION_PATCH);
    EXPECT_EQ(parts, version);
}

TEST(Version, IsMajorMinorPatch) {
    const std::string version = oprt_version();
    int dots = 0;
    bool digit_before = false;
    for (char c : version) {
        if (c == '.') {
            EXPECT_TRUE(digit_before) << version;
            ++dots;
            digit_before = false;
        } else {
            EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(c))) << version;
            digit_before = true;
        }
    }
    EXPECT_EQ(dots, 2) << version;
    EXPECT_TRUE(digit_before) << version;
}

TEST(Version, SameStringEveryCall) {
    EXPECT_EQ(oprt_version(), oprt_version());  // static storage: safe to keep
}

}  // namespace
