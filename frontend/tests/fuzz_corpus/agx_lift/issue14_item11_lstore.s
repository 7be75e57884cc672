; Issue 14 item 11: a threadgroup store with no threadgroup memory declared
; must be refused naming its pc, not by the IR verifier.
ldimm r1, 1
lstore r1, r0l, 0, i32, x
stop
