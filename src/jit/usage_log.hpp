// Hit counts and last-use times of disk-cache entries, recorded without touching the entries.
//
// A hit must stay cheap and must never rewrite a kernel file, so each process counts its hits
// in memory and appends them to a log of its own, <dir>/usage/<pid>-<start us>.log, one line
// per key:
//     <key> <hits since that key's previous line> <last use: Unix seconds.microseconds>
// It appends at exit (atexit), when the counts grow (many keys or hits) and at most a minute
// after the previous append. A key's hits are the sum of its lines; its last use the latest.
// fold_usage() merges every log into <dir>/usage/summary (same format, one line per key) and
// deletes the logs; the kiln-cache tool and eviction fold, so the logs stay few.
//
// Concurrency: appenders and the folder lock each log with flock(). An appender that holds the
// lock but finds the path gone (a fold consumed the file meanwhile) reopens it, so no line goes
// to a deleted file. Folds are serialised by <dir>/usage/fold.lock, and the summary is replaced
// by rename, so a reader sees the old or the new one. A fold that dies between deleting logs
// and renaming the summary loses those hits: they are statistics, nothing depends on them.
//
// Trust: the logs live where kiln loads GPU code from, and folding deletes and creates files.
// In a directory another user could write (or with usage/ a link, or writable by others),
// a planted link would turn those into deletions and writes elsewhere (run as root by
// kiln-cache), so nothing here reads or writes the usage of an untrusted directory
// (usage_trust), and no file in usage/ is opened through a link.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>

#include "jit/file_util.hpp"

namespace kiln::jit {

struct Usage {
  int64_t hits = 0;
  int64_t last_used_us = 0;  // Unix microseconds; 0 when never hit
};
using UsageMap = std::unordered_map<std::string, Usage>;  // by key

// Sums the hits and keeps the later use time.
void merge_usage(UsageMap& into, const UsageMap& from);

// Microseconds since the Unix epoch.
int64_t now_us();

// Counts a hit (memory or disk) on `key` of the cache in `dir`. Thread-safe, fork-safe.
void record_hit(const std::string& dir, const std::string& key);

// Appends this process's pending hits to its log now (atexit does this too).
void flush_usage();

// This process's hits in `dir` that are not in its log yet.
UsageMap pending_usage(const std::string& dir);

// Drops this process's pending hits in `dir` (after clearing the cache).
void forget_pending_usage(const std::string& dir);

// Whether the usage of the cache in `dir` may be read and written: the directory and its usage/
// both trusted (file_util.hpp); else the first problem found.
Trust usage_trust(const std::string& dir);

// The summary plus every log, read-only: what a process without write access can know. Empty
// when the usage is not trusted.
UsageMap read_usage(const std::string& dir);

// Folds the logs into the summary, dropping keys that have no entry file any more, and returns
// the totals. Falls back to read_usage() when the usage directory cannot be written; empty,
// touching nothing, when it is not trusted.
UsageMap fold_usage(const std::string& dir);

// Removes the summary and every log. Returns false when some could not be removed or the usage
// is not trusted (nothing is removed then).
bool remove_usage(const std::string& dir);

// Serialises one line of the log format (used by tests to write logs by hand too).
std::string usage_line(const std::string& key, const Usage& u);

}  // namespace kiln::jit
