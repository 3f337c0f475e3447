/* VTA runtime C API: the functions of Apache TVM VTA's runtime.h with the same meaning. */
#ifndef VTA_RUNTIME_H_
#define VTA_RUNTIME_H_

#include <stddef.h>
#include <stdint.h>

#include "vta/driver.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VTA_MEMCPY_H2D 1
#define VTA_MEMCPY_D2H 2
#define VTA_MEMCPY_D2D 3

/*! Debug flags for VTASetDebugMode. */
#define VTA_DEBUG_DUMP_INSN (1 << 1)
#define VTA_DEBUG_DUMP_UOP (1 << 2)
#define VTA_DEBUG_SKIP_READ_BARRIER (1 << 3)
#define VTA_DEBUG_SKIP_WRITE_BARRIER (1 << 4)
#define VTA_DEBUG_FORCE_SERIAL (1 << 5)

/*! Pipeline stage identifiers for VTADepPush/VTADepPop. */
#define VTA_STAGE_LOAD 1
#define VTA_STAGE_COMPUTE 2
#define VTA_STAGE_STORE 3

/*! Handle of the calling thread's command queue. */
typedef void* VTACommandHandle;

/*! Allocates a data buffer in accelerator memory; returns an opaque buffer handle or NULL. */
void* VTABufferAlloc(size_t size);
void VTABufferFree(void* buffer);
/*!
 * Copies size bytes. kind_mask bit 1 (VTA_MEMCPY_D2H) says `from` is a buffer handle, bit 0
 * (VTA_MEMCPY_H2D) says `to` is a buffer handle; plain host pointers otherwise.
 */
void VTABufferCopy(const void* from, size_t from_offset, void* to, size_t to_offset, size_t size,
                   int kind_mask);
/*! CPU address of a buffer's data. */
void* VTABufferCPUPtr(VTACommandHandle cmd, void* buffer);
void VTAWriteBarrier(VTACommandHandle cmd, void* buffer, uint32_t elem_bits, uint32_t start,
                     uint32_t extent);
void VTAReadBarrier(VTACommandHandle cmd, void* buffer, uint32_t elem_bits, uint32_t start,
                    uint32_t extent);

/*! The calling thread's command queue (created on first use). */
VTACommandHandle VTATLSCommandHandle(void);
/*! Destroys every command queue; the next call creates fresh ones. */
void VTARuntimeShutdown(void);
void VTASetDebugMode(VTACommandHandle cmd, int debug_flag);

/*! 2D load from a buffer into SRAM; sizes in elements of dst_memory_type. */
void VTALoadBuffer2D(VTACommandHandle cmd, void* src_dram_addr, uint32_t src_elem_offset,
                     uint32_t x_size, uint32_t y_size, uint32_t x_stride, uint32_t x_pad_before,
                     uint32_t y_pad_before, uint32_t x_pad_after, uint32_t y_pad_after,
                     uint32_t dst_sram_index, uint32_t dst_memory_type);
/*! 2D store from SRAM into a buffer; sizes in elements of src_memory_type. */
void VTAStoreBuffer2D(VTACommandHandle cmd, uint32_t src_sram_index, uint32_t src_memory_type,
                      void* dst_dram_addr, uint32_t dst_elem_offset, uint32_t x_size,
                      uint32_t y_size, uint32_t x_stride);

/*! Micro-op kernel recording, called from the finit callback of VTAPushGEMMOp/VTAPushALUOp. */
void VTAUopPush(uint32_t mode, uint32_t reset_out, uint32_t dst_index, uint32_t src_index,
                uint32_t wgt_index, uint32_t opcode, uint32_t use_imm, int32_t imm_val);
void VTAUopLoopBegin(uint32_t extent, uint32_t dst_factor, uint32_t src_factor,
                     uint32_t wgt_factor);
void VTAUopLoopEnd(void);

/*!
 * Pushes a GEMM (or ALU) instruction running the micro-op kernel identified by
 * (*uop_handle, signature). finit(signature) records the kernel the first time; later calls reuse
 * it, loading it into the micro-op buffer only if it is not cached there. Returns 0 on success.
 */
int VTAPushGEMMOp(void** uop_handle, int (*finit)(void*), void* signature, int nbytes);
int VTAPushALUOp(void** uop_handle, int (*finit)(void*), void* signature, int nbytes);

/*! Dependency tokens between stages (VTA_STAGE_*); return 0 on success. */
int VTADepPush(VTACommandHandle cmd, int from_qid, int to_qid);
int VTADepPop(VTACommandHandle cmd, int from_qid, int to_qid);

/*! Appends FINISH, runs the queued instructions on the selected target and waits. */
void VTASynchronize(VTACommandHandle cmd, uint32_t wait_cycles);

#ifdef __cplusplus
}
#endif
#endif /* VTA_RUNTIME_H_ */
