#include "base/file_util.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"

namespace mx {

void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write) {
  const std::string temp = path + ".tmp." + std::to_string(::getpid());
  try {
    {
      std::ofstream out(temp, std::ios::binary | std::ios::trunc);
      if (!out) throw Error("cannot write '" + path + "': " + std::strerror(errno));
      write(out);
      out.flush();
      if (!out) throw Error("error while writing '" + path + "' (disk full?)");
    }
    if (std::rename(temp.c_str(), path.c_str()) != 0)
      throw Error("cannot rename '" + temp + "' to '" + path + "': " + std::strerror(errno));
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    throw;
  }
}

uint64_t file_size(const std::string& path) {
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status))
    throw InputError("cannot open '" + path + "': no such file");
  if (!std::filesystem::is_regular_file(status))
    throw InputError("cannot read '" + path + "': not a regular file");
  auto size = std::filesystem::file_size(path, ec);
  if (ec) throw InputError("cannot read '" + path + "': " + ec.message());
  return size;
}

std::string read_file(const std::string& path) {
  const uint64_t size = file_size(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot open '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  // An I/O error through the stream's buffer leaves the ifstream good: a
  // file that has bytes but gave none is how it shows.
  if (text.fail() && size > 0) throw InputError("cannot read '" + path + "'");
  return std::move(text).str();
}

}  // namespace mx
