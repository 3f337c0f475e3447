// Whole-file reads and atomic whole-file writes, with errors that name the file.
#include "tessera/support/file_io.h"

#include <cstdio>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tessera {

std::vector<uint8_t> readBinaryFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path, "cannot open file for reading");
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw Error(path, "is a directory, not a file");
  }
  // A regular file is read into a buffer of its size in one go (a stream iterator would copy byte
  // by byte and grow the buffer by doubling); what its size does not tell (a pipe, a device, a
  // /proc file that says 0 bytes) is read in chunks to its end.
  const bool sized = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  std::vector<uint8_t> bytes(sized ? static_cast<size_t>(st.st_size) : 0);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) {
      ::close(fd);
      throw Error(path, n == 0 ? "the file shrank while it was read" : "read error");
    }
    done += static_cast<size_t>(n);
  }
  for (uint8_t chunk[65536];;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0) {
      ::close(fd);
      throw Error(path, "read error");
    }
    if (n == 0) break;
    bytes.insert(bytes.end(), chunk, chunk + n);
  }
  ::close(fd);
  return bytes;
}

std::string readTextFile(const std::string& path) {
  const std::vector<uint8_t> bytes = readBinaryFile(path);
  return std::string(bytes.begin(), bytes.end());
}

void writeBinaryFile(const std::string& path, const std::vector<uint8_t>& bytes, bool overwrite) {
  writeBinaryFile(path, bytes.data(), bytes.size(), overwrite);
}

void writeBinaryFile(const std::string& path, const uint8_t* data, uint64_t size, bool overwrite) {
  struct stat st;
  if (!overwrite && ::stat(path.c_str(), &st) == 0)
    throw FileExistsError(path);
  std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  {
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) throw Error(path, "cannot create file for writing");
    for (uint64_t done = 0; done < size;) {
      const ssize_t n = ::write(fd, data + done, size - done);
      if (n <= 0) {
        ::close(fd);
        std::remove(tmp.c_str());
        throw Error(path, "write error");
      }
      done += static_cast<uint64_t>(n);
    }
    if (::close(fd) != 0) {
      std::remove(tmp.c_str());
      throw Error(path, "write error");
    }
  }
  // Replacing a regular file: remove it, then move the new one in. A reader sees the old file, no
  // file or the whole new one, never part of one. (Renaming over it, like truncating it, makes
  // ext4 write the new file's data out at once, auto_da_alloc, which costs milliseconds a file.)
  if (overwrite && ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) ::unlink(path.c_str());
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw Error(path, "cannot move the written file into place");
  }
}

void writeTextFile(const std::string& path, const std::string& text, bool overwrite) {
  writeBinaryFile(path, reinterpret_cast<const uint8_t*>(text.data()), text.size(), overwrite);
}

}  // namespace tessera
