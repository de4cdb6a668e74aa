;; The memory.copy ceiling, assembled by hand in memory-copy.js:
;; copy(dst, src, n) moves n bytes inside the imported memory.
(module
  (import "env" "memory" (memory 1))
  (func (export "copy") (param $dst i32) (param $src i32) (param $n i32)
    (memory.copy (local.get $dst) (local.get $src) (local.get $n))))
