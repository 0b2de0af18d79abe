#include "recordio/byte_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "recordio/format_error.h"

namespace recordio {

FileSource::FileSource(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0)
    throw FormatError::in_file(path_, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw FormatError::in_file(path_, "cannot read: not a regular file");
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

FileSource::~FileSource() {
  if (fd_ >= 0) ::close(fd_);
}

size_t FileSource::read_at(uint64_t offset, void* dst, size_t n) const {
  size_t done = 0;
  while (done < n && offset + done < size_) {
    ssize_t got =
        ::pread(fd_, static_cast<char*>(dst) + done, n - done, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      throw FormatError(path_, offset + done, std::string("read error: ") + std::strerror(errno));
    }
    if (got == 0) break;  // the file shrank since it was opened
    done += static_cast<size_t>(got);
  }
  return done;
}

size_t MemorySource::read_at(uint64_t offset, void* dst, size_t n) const {
  if (offset >= bytes_.size()) return 0;
  const size_t count = std::min<uint64_t>(n, bytes_.size() - offset);
  std::memcpy(dst, bytes_.data() + offset, count);
  return count;
}

std::shared_ptr<const ByteSource> open_file(const std::string& path) {
  return std::make_shared<FileSource>(path);
}

}  // namespace recordio
