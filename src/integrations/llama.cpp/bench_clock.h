// bench_clock.h: the clock run.cpp's --bench and norm-bench.cpp time with,
// as tests/bench/timing.js does for the package's rows. In Node, the CPU
// time of the process (process.cpuUsage): on a machine shared by more
// runnable threads than cores, wall time also counts the time the scheduler
// gave to others, which swamps these runs; the engine runs on one thread.
// In a page, performance.now(), the only clock there (served cross-origin
// isolated, at its finest resolution).
#pragma once

#include <emscripten.h>

// clang-format off
EM_JS(double, bench_clock_us, (), {
  if (typeof process !== 'undefined' && typeof process.cpuUsage === 'function') {
    const usage = process.cpuUsage();
    return usage.user + usage.system;
  }
  return performance.now() * 1000;
});
// clang-format on
