/* FreeRTOS heap hooks: include from FreeRTOSConfig.h after setting
 * EM_FREERTOS_POOL to the pool id returned by em_pool() for the heap
 * (a global, e.g. `extern uint8_t em_freertos_pool;`).
 *
 * What FreeRTOS passes its trace macros is not the request. heap_2, heap_4
 * and heap_5 pass traceMALLOC and traceFREE the block's size: the request
 * plus the 8-byte BlockLink_t header and alignment, and any remainder too
 * small to split off (FreeRTOS V11.2 and later; older kernels pass
 * traceMALLOC the request with header and alignment added, traceFREE the
 * block size). So sizes, peaks and usage here are the bytes the heap
 * really spends, about 8-16 B more per block than was asked for. A failed
 * pvPortMalloc is passed size 0 (V11.2 and later): the failure is recorded,
 * its size is not known. heap_3 passes the request (and traceFREE 0).
 *
 * Summary mode (-DEDGEMEM_SUMMARY=1) lowers the heap's used bytes at each
 * free by the size traceFREE passes, which matches traceMALLOC's on V11.2
 * and later with heap_2/4/5; heap_3, and older kernels, should report the
 * heap's level instead: em_pool_level(pool, configTOTAL_HEAP_SIZE -
 * xPortGetFreeHeapSize(), largest free block from vPortGetHeapStats()). */
#ifndef EDGEMEM_FREERTOS_H
#define EDGEMEM_FREERTOS_H

/* FreeRTOSConfig.h is also included by some ports' assembler files. */
#ifndef __ASSEMBLER__

#include "edgemem.h"

#ifndef EM_FREERTOS_POOL
#define EM_FREERTOS_POOL em_freertos_pool
extern uint8_t em_freertos_pool;
#endif

#define traceMALLOC(pvAddress, uiSize)                                                     \
  do {                                                                                     \
    if (pvAddress) em_alloc(EM_FREERTOS_POOL, (uintptr_t)(pvAddress), (uint32_t)(uiSize), 8, \
                            EM_SITE_CALLER());                                             \
    else em_alloc_failed(EM_FREERTOS_POOL, (uint32_t)(uiSize), 8, EM_SITE_CALLER());       \
  } while (0)

/* A full trace frees by address (the host knows the block); summary mode
 * needs the size to lower the used bytes. */
#define traceFREE(pvAddress, uiSize) \
  em_free_sized(EM_FREERTOS_POOL, (uintptr_t)(pvAddress), (uint32_t)(uiSize), EM_SITE_CALLER())

#endif /* __ASSEMBLER__ */
#endif
