#ifndef TONEARM_PROCESS_START_H
#define TONEARM_PROCESS_START_H

/* 1 when the allocators' settings were in the environment as tonearmd started (set by the user,
 * by a unit file, or by tonearmd executing itself again with them: see process_start.c); 0 when
 * executing again failed and tonearmd runs with the allocators' defaults. */
int tonearm_allocator_settings_in_place(void);

#endif
