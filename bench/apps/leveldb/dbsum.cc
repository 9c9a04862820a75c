// dbsum: prints the number of entries of a LevelDB database and an FNV-1a
// hash of every key and value in key order, so that two databases written
// by different builds can be compared (bench/apps/leveldb).
//   dbsum DBDIR
#include <cstdint>
#include <cstdio>

#include "leveldb/db.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: dbsum DBDIR\n");
    return 2;
  }
  leveldb::DB* db = nullptr;
  leveldb::Options options;
  leveldb::Status s = leveldb::DB::Open(options, argv[1], &db);
  if (!s.ok()) {
    std::fprintf(stderr, "dbsum: %s: %s\n", argv[1], s.ToString().c_str());
    return 1;
  }
  uint64_t h = 1469598103934665603ull, n = 0;
  leveldb::Iterator* it = db->NewIterator(leveldb::ReadOptions());
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    for (leveldb::Slice x : {it->key(), it->value()}) {
      for (size_t i = 0; i < x.size(); i++) h = (h ^ (unsigned char)x[i]) * 1099511628211ull;
      h = (h ^ 0xff) * 1099511628211ull;
    }
    n++;
  }
  int rc = it->status().ok() ? 0 : 1;
  std::printf("entries %llu fnv %016llx\n", (unsigned long long)n, (unsigned long long)h);
  delete it;
  delete db;
  return rc;
}
