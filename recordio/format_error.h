// Errors of the RecordIO library. FormatError is bad input (a damaged,
// truncated or foreign file; a malformed .idx or .lst line) and always says
// which file and where: a byte offset for binary files, a line for text.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace recordio {

// A failure that is not the input's fault: a write that fails, a payload too
// large for the format.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class FormatError : public Error {
 public:
  enum class Where { kFile, kByte, kLine };

  // "FILE: byte OFFSET: MESSAGE"
  FormatError(std::string file, uint64_t offset, std::string message);
  // "FILE:LINE: MESSAGE"
  static FormatError at_line(std::string file, uint64_t line, std::string message);
  // "FILE: MESSAGE" (cannot open, empty, ...)
  static FormatError in_file(std::string file, std::string message);

  const std::string& file() const { return file_; }
  Where where() const { return where_; }
  // The byte offset (kByte) or the 1-based line (kLine); 0 for kFile.
  uint64_t position() const { return position_; }
  const std::string& message() const { return message_; }

 private:
  FormatError(Where where, std::string file, uint64_t position, std::string message);

  Where where_;
  std::string file_;
  uint64_t position_;
  std::string message_;
};

}  // namespace recordio
