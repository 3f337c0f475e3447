// The one helper the unit tests share for reading a tessera::Error's message.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "tessera/support/error.h"

namespace tessera::testutil {

// The message of the tessera::Error `f` throws; a test failure if it throws none.
template <typename F>
std::string errorOf(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no tessera::Error thrown";
  return "";
}

}  // namespace tessera::testutil
