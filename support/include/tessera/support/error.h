// Error type shared by every Tessera library: a message plus where the problem was found.
#pragma once

#include <stdexcept>
#include <string>

namespace tessera {

// Thrown for bad input (configs, programs, files, arguments) and simulator faults.
// `where` names the location: a file and key, an instruction index and field, an argument.
class Error : public std::runtime_error {
 public:
  Error(std::string where, const std::string& what)
      : std::runtime_error(where.empty() ? what : where + ": " + what), where_(std::move(where)),
        what_(what) {}
  const std::string& where() const { return where_; }
  const std::string& reason() const { return what_; }

 private:
  std::string where_;
  std::string what_;
};

}  // namespace tessera
