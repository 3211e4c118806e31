/* FreeRTOS heap hooks: include from FreeRTOSConfig.h after setting
 * EM_FREERTOS_POOL to the pool id returned by em_pool() for the heap
 * (a global, e.g. `extern uint8_t em_freertos_pool;`).
 *
 * heap_4/heap_5 call traceFREE with the block size *including* their
 * BlockLink_t header, not the size that was requested. edgemem records the
 * free by address only; the host takes the size from the allocation, so
 * the header never inflates the numbers. */
#ifndef EDGEMEM_FREERTOS_H
#define EDGEMEM_FREERTOS_H

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

#define traceFREE(pvAddress, uiSize)                                        \
  do {                                                                      \
    (void)(uiSize); /* header-inclusive in heap_4: deliberately unused */ \
    em_free(EM_FREERTOS_POOL, (uintptr_t)(pvAddress), EM_SITE_CALLER());    \
  } while (0)

#endif
