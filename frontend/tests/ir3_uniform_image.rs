//! The ir3 uniform image (`lift::uniform_image`) that KGSL builds for every
//! dispatch, and the layout of a dispatch that binds nothing (AQL, the facade):
//! exact offsets and bytes.

use wavejit_frontend::ir3::lift::{
    CONST_BYTES, DescriptorLayout, Descriptors, info, uniform_image,
};

fn u32_at(image: &[u8], at: u32) -> u32 {
    let a = at as usize;
    u32::from_le_bytes([image[a], image[a + 1], image[a + 2], image[a + 3]])
}

fn u64_at(image: &[u8], at: u32) -> u64 {
    u64::from(u32_at(image, at)) | u64::from(u32_at(image, at + 4)) << 32
}

#[test]
fn the_image_lays_out_consts_descriptors_then_the_aligned_info_block() {
    let texture: [u32; 16] = std::array::from_fn(|i| 100 + i as u32);
    let sampler = [200, 201, 202, 203];
    let bound = Descriptors {
        textures: &[texture],
        samplers: &[sampler],
        uavs: &[],
        ubos: &[0x1122_3344_5566_7788],
        texmemobj_base: 0xaa,
        uav_base: 0xbb,
        bindless_base: [1, 2, 3, 4, 5],
    };
    let (image, l) = uniform_image(&[7, 8], &bound);
    let want = DescriptorLayout {
        tex_off: 4096,
        tex_count: 1,
        samp_off: 4160,
        samp_count: 1,
        uav_off: 4176,
        uav_count: 0,
        ubo_off: 4176,
        ubo_count: 1,
        info_off: 4184,
    };
    assert_eq!(l, want);
    assert_eq!(image.len(), 4184 + 56);
    assert_eq!(l.image_bytes() as usize, image.len());
    assert_eq!((u32_at(&image, 0), u32_at(&image, 4)), (7, 8));
    assert!(
        image[8..4096].iter().all(|&b| b == 0),
        "const file padded with zeros"
    );
    assert_eq!(u32_at(&image, 4096), 100);
    assert_eq!(u32_at(&image, 4096 + 60), 115);
    assert_eq!(u32_at(&image, 4160 + 12), 203);
    assert_eq!(u64_at(&image, 4176), 0x1122_3344_5566_7788);
    let info_at = |off: u32| u64_at(&image, l.info_off + off);
    assert_eq!(info_at(info::TEXMEMOBJ_BASE), 0xaa);
    assert_eq!(info_at(info::UAV_BASE), 0xbb);
    assert_eq!(info_at(info::BINDLESS_BASE), 1);
    assert_eq!(info_at(info::BINDLESS_BASE + 32), 5);
}

#[test]
fn a_const_file_longer_than_the_image_holds_is_cut() {
    let consts = vec![0xffff_ffffu32; 2000];
    let bound = Descriptors {
        samplers: &[[1, 2, 3, 4]],
        ..Descriptors::default()
    };
    let (image, l) = uniform_image(&consts, &bound);
    assert_eq!(u32_at(&image, CONST_BYTES - 4), 0xffff_ffff);
    assert_eq!(
        u32_at(&image, CONST_BYTES),
        1,
        "const file cut at 4096 bytes"
    );
    assert_eq!(l.info_off, 4112);
    assert_eq!(image.len() as u32, 4112 + info::BYTES);
}

#[test]
fn a_dispatch_binding_nothing_has_the_info_block_after_the_consts() {
    let none = DescriptorLayout::none();
    assert_eq!(
        [
            none.tex_off,
            none.samp_off,
            none.uav_off,
            none.ubo_off,
            none.info_off
        ],
        [CONST_BYTES; 5]
    );
    assert_eq!(
        [
            none.tex_count,
            none.samp_count,
            none.uav_count,
            none.ubo_count
        ],
        [0; 4]
    );
    assert_eq!(none.image_bytes(), 4096 + 56);
    let (image, l) = uniform_image(&[], &Descriptors::default());
    assert_eq!(l, none);
    assert_eq!(image, vec![0; 4096 + 56]);
}
