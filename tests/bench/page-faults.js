// What first-touched memory costs on this machine, for the set-up figure of
// the GPU bench: compiling a pipeline grows the browser's GPU process, and
// each page it touches for the first time is a page fault. On a virtual
// machine whose host backs guest memory lazily a fault can cost a hundred
// times what it costs on bare metal, and then it is a large part of the
// set-up time (docs/webgpu.md, "Set-up"). Linux only (/proc); elsewhere
// both functions return null.
import { existsSync, readdirSync, readFileSync } from 'node:fs';

/** Minor page faults so far of every process whose command line starts
 * with a path containing `program` (its name, e.g. 'chromium') and, with
 * `type`, holds `--type=${type}` (Chromium's child processes). */
export function faultsOf(program, type = null) {
  if (!existsSync('/proc/self/stat')) return null;
  let faults = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      // (Chromium rewrites its processes' titles: the arguments then come joined by spaces.)
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(/[\0 ]/);
      if (!argv[0].includes(program) || (type !== null && !argv.includes(`--type=${type}`))) continue;
      // Field 10 of stat is minflt; the command name (field 2) may hold spaces, so count from its ')'.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      faults += Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[7]);
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return faults;
}

/** Microseconds a page of fresh memory costs on its first write: 64 MiB
 * newly allocated, one byte a page written. */
export function freshPageMicroseconds() {
  if (!existsSync('/proc/self/stat')) return null;
  const pages = 16384;
  const bytes = new Uint8Array(new ArrayBuffer(pages * 4096));
  const start = process.hrtime.bigint();
  for (let i = 0; i < pages; i++) bytes[i * 4096] = 1;
  return Number(process.hrtime.bigint() - start) / 1000 / pages;
}
