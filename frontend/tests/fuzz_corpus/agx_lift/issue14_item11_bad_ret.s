; Issue 14 item 11: `ret` to an address that is no instruction start traps;
; the fault names the instruction.
ldimm r1, 0x40
ret r1
