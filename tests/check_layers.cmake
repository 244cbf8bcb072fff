# The layering of src/ (DESIGN.md's pipeline): each folder may include only the folders below
# it. Run by ctest (`layering`) as `cmake -DSRC=<repo>/src -P check_layers.cmake`; a wrong
# include fails CI with the file, the line and what its folder may include. Public headers
# (kiln/...) and kernels/ (shared host/device semantics, included by relative path) are open
# to all. A new folder has no entry here until someone decides where it sits.
set(layers_common common)
set(layers_graph graph common)
set(layers_plan plan graph common)
set(layers_codegen codegen plan graph common)
set(layers_jit jit common)
set(layers_host host plan graph common)
set(layers_cuda cuda codegen plan graph jit common)
# The engine: evaluation, the plan cache and the runner, over the backends of plan/backend.hpp.
set(layers_runtime runtime cuda host jit codegen plan graph common)
# The NumPy surface: it evaluates through runtime; of the executors it asks only src/cuda, what
# kind of memory a pointer given to kiln::wrap is (cuda/pointer.hpp).
set(layers_api api runtime cuda codegen plan graph common)
# Sharded arrays over a kiln::Mesh, built from the NumPy surface's public API (kiln/...): of the
# layers it asks runtime for memory, src/cuda for streams and devices (NCCL runs on kiln's
# streams), graph for the dtype rules of reductions and leaves over that memory.
set(layers_mesh mesh runtime cuda graph common)

file(GLOB_RECURSE files ${SRC}/*.cpp ${SRC}/*.hpp)
set(bad "")
foreach(f ${files})
  file(RELATIVE_PATH rel ${SRC} ${f})
  string(REGEX MATCH "^[^/]+" layer "${rel}")
  file(STRINGS ${f} lines REGEX "^#include \"[a-z_]+/")
  foreach(line ${lines})
    string(REGEX MATCH "\"([a-z_]+)/" unused "${line}")
    set(dep ${CMAKE_MATCH_1})
    if(dep STREQUAL "kiln")
      continue()
    endif()
    list(FIND layers_${layer} ${dep} at)
    if(at EQUAL -1)
      string(REPLACE ";" " " may "${layers_${layer}}")
      list(APPEND bad "src/${rel}: ${line}  (src/${layer} may include: ${may})")
    endif()
  endforeach()
endforeach()
if(bad)
  string(REPLACE ";" "\n  " text "${bad}")
  message(FATAL_ERROR "layering: includes across the pipeline's layers:\n  ${text}\n"
                      "Move the shared code down a layer (src/common, src/graph) instead.")
endif()
list(LENGTH files count)
message(STATUS "layering: ${count} files of src/ include only the layers below them")
