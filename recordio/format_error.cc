#include "recordio/format_error.h"

#include <utility>

namespace recordio {
namespace {

std::string compose(FormatError::Where where, const std::string& file, uint64_t position,
                    const std::string& message) {
  switch (where) {
    case FormatError::Where::kByte:
      return file + ": byte " + std::to_string(position) + ": " + message;
    case FormatError::Where::kLine: return file + ":" + std::to_string(position) + ": " + message;
    case FormatError::Where::kFile: break;
  }
  return file + ": " + message;
}

}  // namespace

FormatError::FormatError(Where where, std::string file, uint64_t position, std::string message)
    : Error(compose(where, file, position, message)),
      where_(where),
      file_(std::move(file)),
      position_(position),
      message_(std::move(message)) {}

FormatError::FormatError(std::string file, uint64_t offset, std::string message)
    : FormatError(Where::kByte, std::move(file), offset, std::move(message)) {}

FormatError FormatError::at_line(std::string file, uint64_t line, std::string message) {
  return FormatError(Where::kLine, std::move(file), line, std::move(message));
}

FormatError FormatError::in_file(std::string file, std::string message) {
  return FormatError(Where::kFile, std::move(file), 0, std::move(message));
}

}  // namespace recordio
