// The kernels/*.cuh texts that cmake/EmbedHeaders.cmake compiles into the library.
#pragma once
#include <cstddef>

namespace kiln::jit::detail {

struct EmbeddedFile {
  const char* name;  // "kiln/<file>.cuh", the name kernels #include
  const char* text;  // NUL-terminated
  std::size_t size;  // bytes, excluding the terminating NUL
};

// Sorted by name and ended by an entry whose name is null (so an empty kernels/ still links).
extern const EmbeddedFile kEmbeddedFiles[];

}  // namespace kiln::jit::detail
