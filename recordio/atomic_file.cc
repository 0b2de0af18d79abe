#include "recordio/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "recordio/format_error.h"

namespace recordio {
namespace {
constexpr size_t kBufferSize = size_t{1} << 20;
}

AtomicFile::AtomicFile(std::string path)
    : path_(std::move(path)),
      temp_(path_ + ".tmp." + std::to_string(::getpid())),
      buffer_(new char[kBufferSize]) {
  out_.rdbuf()->pubsetbuf(buffer_.get(), kBufferSize);
  out_.open(temp_, std::ios::binary | std::ios::trunc);
  if (!out_) throw Error("cannot write '" + path_ + "': " + std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  out_.close();
  std::remove(temp_.c_str());
}

void AtomicFile::commit() {
  out_.flush();
  const bool written = static_cast<bool>(out_);
  out_.close();
  if (!written || out_.fail()) {
    std::remove(temp_.c_str());
    committed_ = true;
    throw Error("error while writing '" + path_ + "' (disk full?)");
  }
  if (std::rename(temp_.c_str(), path_.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(temp_.c_str());
    committed_ = true;
    throw Error("cannot rename '" + temp_ + "' to '" + path_ + "': " + reason);
  }
  committed_ = true;
}

}  // namespace recordio
