//! Command-processor state: the register file and the state that
//! CP_LOAD_STATE6 snapshots (constants and descriptors), plus the compute
//! dispatch description that CP_EXEC_CS derives from them.

/// The a6xx register space addressed by type4 packets (18-bit offsets).
pub struct Registers {
    values: Vec<u32>,
}

impl Default for Registers {
    fn default() -> Self {
        Registers {
            values: vec![0; 1 << 18],
        }
    }
}

impl Registers {
    pub fn get(&self, reg: u32) -> u32 {
        self.values.get(reg as usize).copied().unwrap_or(0)
    }

    pub fn set(&mut self, reg: u32, value: u32) {
        if let Some(slot) = self.values.get_mut(reg as usize) {
            *slot = value;
        }
    }

    /// Every register holding a non-zero value, in offset order.
    pub fn nonzero(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.values
            .iter()
            .enumerate()
            .filter(|(_, v)| **v != 0)
            .map(|(r, v)| (r as u32, *v))
    }

    pub fn get64(&self, reg: u32) -> u64 {
        u64::from(self.get(reg)) | (u64::from(self.get(reg + 1)) << 32)
    }
}

/// a6xx register offsets the compute path reads (a6xx.xml names).
pub mod reg {
    pub const SP_CS_CNTL_0: u32 = 0xa9b0;
    pub const SP_CS_CNTL_1: u32 = 0xa9b1;
    pub const SP_CS_BOOLEAN_CF_MASK: u32 = 0xa9b2;
    pub const SP_CS_PROGRAM_COUNTER_OFFSET: u32 = 0xa9b3;
    pub const SP_CS_BASE: u32 = 0xa9b4;
    pub const SP_CS_PVT_MEM_PARAM: u32 = 0xa9b6;
    pub const SP_CS_PVT_MEM_BASE: u32 = 0xa9b7;
    pub const SP_CS_PVT_MEM_SIZE: u32 = 0xa9b9;
    pub const SP_CS_CONFIG: u32 = 0xa9bb;
    pub const SP_CS_INSTR_SIZE: u32 = 0xa9bc;
    pub const SP_CS_SAMPLER_BASE: u32 = 0xa9e2;
    pub const SP_CS_TEXMEMOBJ_BASE: u32 = 0xa9e6;
    /// SP_CS_BINDLESS_BASE[0..5]: 64-bit each, stride 2 (A6XX).
    pub const SP_CS_BINDLESS_BASE: u32 = 0xa9e8;
    pub const SP_CS_UAV_BASE: u32 = 0xa9f2;
    pub const SP_MODE_CNTL: u32 = 0xab00;
    pub const SP_CS_CONST_CONFIG: u32 = 0xb987;
    pub const SP_CS_NDRANGE_0: u32 = 0xb990;
    pub const SP_CS_CONST_CONFIG_0: u32 = 0xb997;
    pub const SP_CS_WGE_CNTL: u32 = 0xb998;
    pub const SP_CS_KERNEL_GROUP_X: u32 = 0xb999;
    /// HLSQ_CS_BINDLESS_BASE[0..5]: mirror of SP_CS_BINDLESS_BASE.
    pub const HLSQ_CS_BINDLESS_BASE: u32 = 0xb9c0;
    /// CP_ALWAYS_ON_COUNTER (64-bit, 19.2 MHz).
    pub const CP_ALWAYS_ON_COUNTER: u32 = 0x980;
}

/// Dwords in the compute const file (256 vec4).
pub const CONST_DWORDS: usize = 1024;

/// State loaded by CP_LOAD_STATE6 for the compute stage, snapshotted when the
/// packet executes.
#[derive(Clone)]
pub struct LoadedState {
    /// c0.x .. c255.w
    pub consts: Vec<u32>,
    /// Texture descriptors (16 dwords each) by slot.
    pub textures: Vec<[u32; 16]>,
    /// Sampler descriptors (4 dwords each) by slot.
    pub samplers: Vec<[u32; 4]>,
    /// UAV/IBO descriptors (16 dwords each) by slot.
    pub uavs: Vec<[u32; 16]>,
    /// UBO descriptors (address, size in vec4) by slot.
    pub ubos: Vec<u64>,
}

impl Default for LoadedState {
    fn default() -> Self {
        LoadedState {
            consts: vec![0; CONST_DWORDS],
            textures: Vec::new(),
            samplers: Vec::new(),
            uavs: Vec::new(),
            ubos: Vec::new(),
        }
    }
}

/// Everything a compute dispatch needs, read from the registers and loaded state
/// at CP_EXEC_CS time.
#[derive(Clone)]
pub struct CsDispatch {
    pub groups: [u32; 3],
    pub local_size: [u32; 3],
    /// Shader address (SP_CS_BASE) and length in bytes (SP_CS_INSTR_SIZE * 128).
    pub shader_addr: u64,
    pub shader_len: u64,
    /// SP_CS_CNTL_0 fields.
    pub full_regs: u32,
    pub half_regs: u32,
    pub merged_regs: bool,
    /// Wave size: 64 (THREAD64) or 128.
    pub wave_size: u32,
    /// Workgroup-local memory in bytes (SP_CS_CNTL_1.SHARED_SIZE).
    pub shared_size: u32,
    /// Private memory per fiber in bytes (SP_CS_PVT_MEM_PARAM.MEMSIZEPERITEM * 512).
    pub private_size: u32,
    /// Register ids (a3xx regid: reg*4+comp; 0xfc = unused) from SP_CS_CONST_CONFIG_0
    /// and SP_CS_WGE_CNTL.
    pub workgroup_id_regid: u32,
    pub local_id_regid: u32,
    pub linear_local_id_regid: u32,
    /// SP_MODE_CNTL.CONSTANT_DEMOTION_ENABLE: hcN reads 32-bit cN and converts.
    pub const_demotion: bool,
    pub state: LoadedState,
    /// SP_CS_TEXMEMOBJ_BASE: all texture descriptors (index >= 16 is read from here).
    pub texmemobj_base: u64,
    pub uav_base: u64,
    /// SP_CS_BOOLEAN_CF_MASK: bit N is the condition of `brac.N`.
    pub boolean_cf_mask: u32,
    /// `SP_CS_BINDLESS_BASE[b]` as written (address | DESC_SIZE), or its
    /// HLSQ_CS_BINDLESS_BASE mirror where only that was written.
    pub bindless_base: [u64; 5],
}

impl CsDispatch {
    pub fn from_registers(r: &Registers, state: &LoadedState, groups: [u32; 3]) -> CsDispatch {
        let nd0 = r.get(reg::SP_CS_NDRANGE_0);
        let cntl0 = r.get(reg::SP_CS_CNTL_0);
        let cntl1 = r.get(reg::SP_CS_CNTL_1);
        let shared_field = cntl1 & 0x1f;
        let const_cfg0 = r.get(reg::SP_CS_CONST_CONFIG_0);
        let wge = r.get(reg::SP_CS_WGE_CNTL);
        CsDispatch {
            groups,
            local_size: [
                ((nd0 >> 2) & 0x3ff) + 1,
                ((nd0 >> 12) & 0x3ff) + 1,
                ((nd0 >> 22) & 0x3ff) + 1,
            ],
            shader_addr: r.get64(reg::SP_CS_BASE),
            shader_len: u64::from(r.get(reg::SP_CS_INSTR_SIZE)) * 128,
            half_regs: (cntl0 >> 1) & 0x3f,
            full_regs: (cntl0 >> 7) & 0x3f,
            merged_regs: cntl0 >> 31 != 0,
            wave_size: if (cntl0 >> 20) & 1 == 0 { 64 } else { 128 },
            shared_size: if shared_field == 0 {
                32 * 1024
            } else {
                (shared_field + 1) * 1024
            },
            private_size: (r.get(reg::SP_CS_PVT_MEM_PARAM) & 0xff) * 512,
            workgroup_id_regid: const_cfg0 & 0xff,
            local_id_regid: const_cfg0 >> 24,
            linear_local_id_regid: wge & 0xff,
            const_demotion: r.get(reg::SP_MODE_CNTL) & 1 != 0,
            state: state.clone(),
            texmemobj_base: r.get64(reg::SP_CS_TEXMEMOBJ_BASE),
            uav_base: r.get64(reg::SP_CS_UAV_BASE),
            boolean_cf_mask: r.get(reg::SP_CS_BOOLEAN_CF_MASK),
            bindless_base: std::array::from_fn(|b| {
                let sp = r.get64(reg::SP_CS_BINDLESS_BASE + 2 * b as u32);
                if sp != 0 {
                    sp
                } else {
                    r.get64(reg::HLSQ_CS_BINDLESS_BASE + 2 * b as u32)
                }
            }),
        }
    }
}
