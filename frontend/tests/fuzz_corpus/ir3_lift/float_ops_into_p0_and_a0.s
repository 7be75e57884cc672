; Found by this target: float results written to p0 (lifted as an integer
; compare of a float value) and brcst.active from a half register into a full
; one (a select of an i16 and an i32) made the lifter build IR the verifier
; refused, reported as an internal error at pc 0.
shl.b r0.y, r0.x, 2
add.u r1.x, c0.x, r0.y
mov.u32u32 r1.y, c0.y
(sy)brcst.active.w16 (u8)(x)hr39.w, hr4.y
(sy)(ss)(rpt3)sqrt a0.y, (r)hc356.y
(sy)rcp p0.w, (abs)hc103.x
(jp)(sat)sqrt p0.y, (last)(neg)hr26.x
(sat)(nop3) (ul)absneg.f p0.w, r<a0.x + -402>
(rpt3)rndaz.f p0.w, (neg)hc311.z
end
