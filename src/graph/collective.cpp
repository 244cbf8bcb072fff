#include "graph/collective.hpp"

namespace kiln::graph {

const char* collective_name(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::AllReduce:
      return "all-reduce";
    case CollectiveKind::AllGather:
      return "all-gather";
    case CollectiveKind::AllToAll:
      return "all-to-all";
  }
  return "?";
}

const char* collective_name(CollectiveReduction r) {
  switch (r) {
    case CollectiveReduction::Sum:
      return "sum";
    case CollectiveReduction::Prod:
      return "prod";
    case CollectiveReduction::Max:
      return "max";
    case CollectiveReduction::Min:
      return "min";
  }
  return "?";
}

int64_t collective_bytes_sent(CollectiveKind k, int64_t part_bytes, int ranks) {
  const int64_t others = ranks - 1;
  switch (k) {
    case CollectiveKind::AllReduce:
      return 2 * others * part_bytes / ranks;
    case CollectiveKind::AllGather:
      return others * part_bytes;
    case CollectiveKind::AllToAll:
      return others * part_bytes / ranks;
  }
  return 0;
}

}  // namespace kiln::graph
