// Whole-file reads and atomic whole-file writes, with errors that name the file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/support/error.h"

namespace tessera {

// Thrown by writeBinaryFile when the file exists and replacing it was not asked for. A caller that
// offers a way to replace it (a CLI's --force) adds that to its message; libraries know no flags.
class FileExistsError : public Error {
 public:
  explicit FileExistsError(const std::string& path) : Error(path, "file exists; refusing to overwrite it") {}
};

// The whole file, regular or not (a pipe, a device: read to its end). Throws tessera::Error
// naming the path if it cannot be opened or read.
std::vector<uint8_t> readBinaryFile(const std::string& path);
std::string readTextFile(const std::string& path);

// Writes to a temporary file moved into place, so no reader sees part of a file and a failed write
// leaves the old one. Without `overwrite` an existing file is a FileExistsError; with it the old
// file is removed just before the move. Throws tessera::Error naming the path.
void writeBinaryFile(const std::string& path, const uint8_t* data, uint64_t size, bool overwrite);
void writeBinaryFile(const std::string& path, const std::vector<uint8_t>& bytes, bool overwrite);
void writeTextFile(const std::string& path, const std::string& text, bool overwrite);

}  // namespace tessera
