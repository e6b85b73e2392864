// Runs a libFuzzer harness over files, without libFuzzer: the ordinary build
// (any compiler) links each fuzz/*_fuzz.cc with this main, and ctest runs it
// over the harness's corpus and regressions (fuzz_replay_<name>). So a
// harness that no longer compiles, or an input that once crashed it and
// crashes again, fails the README's test command, not only scripts/fuzz.sh.
//
// Usage: <name>_replay FILE_OR_DIR...  (a directory: each regular file in it)
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

bool RunFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return false;
  }
  const std::string bytes((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()),
                         bytes.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int ran = 0;
  bool ok = true;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg(argv[i]);
    std::error_code ec;
    if (std::filesystem::is_directory(arg, ec)) {
      std::vector<std::filesystem::path> files;
      for (const auto& e : std::filesystem::directory_iterator(arg)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
      for (const auto& f : files) {
        ok = RunFile(f) && ok;
        ++ran;
      }
    } else if (std::filesystem::exists(arg, ec)) {
      ok = RunFile(arg) && ok;
      ++ran;
    }
  }
  std::printf("%d inputs ran without a crash\n", ran);
  return ok && ran > 0 ? 0 : 1;
}
