/*
 * Loader entry: the PVH ELF note, the Multiboot2 header and the 32-bit trampoline into long mode.
 *
 * Both protocols enter in 32-bit protected mode with paging off and no usable stack:
 *   PVH        (Xen "x86/HVM direct boot ABI", xen/include/public/arch-x86/hvm/start_info.h):
 *              %ebx = physical address of struct hvm_start_info.
 *   Multiboot2 (Multiboot2 specification 1.0, section 3.3 "I386 machine state"):
 *              %eax = 0x36d76289, %ebx = physical address of the boot information.
 * The trampoline identity-maps the first 4 GiB with 2 MiB pages, enables PAE, long mode, NX,
 * SSE (the precompiled `core` uses SSE), loads a 64-bit GDT and calls
 *   _boot_entry64(protocol: u32 (1 = PVH, 2 = Multiboot2), magic: u32, info_phys: u32)
 * on a 16-byte aligned stack. That function never returns.
 *
 * This file is included by the kernel binary with global_asm! (AT&T syntax).
 */

/* ---- PVH: XEN_ELFNOTE_PHYS32_ENTRY (18), xen/include/public/elfnote.h ---- */
    .section .note.Xen, "a", @note
    .balign 4
    .long 4                 /* namesz: "Xen\0" */
    .long 8                 /* descsz: QEMU reads a 64-bit value for ELF64 */
    .long 18                /* XEN_ELFNOTE_PHYS32_ENTRY */
    .asciz "Xen"
    .balign 4
    .quad _start_pvh
    .balign 4

/* ---- Multiboot2 header (Multiboot2 specification 1.0, section 3.1) ---- */
    .section .multiboot2_header, "a"
    .balign 8
mb2_header_start:
    .long 0xe85250d6                                        /* magic */
    .long 0                                                 /* architecture: i386 protected mode */
    .long mb2_header_end - mb2_header_start                 /* header_length */
    .long -(0xe85250d6 + 0 + (mb2_header_end - mb2_header_start))  /* checksum */

    /* entry address tag (type 3): enter at _start_mb2 */
    .balign 8
    .short 3
    .short 0
    .long 12
    .long _start_mb2

    /* console flags tag (type 4): we have no EGA text console support requirement */
    .balign 8
    .short 4
    .short 0
    .long 12
    .long 0

    /* framebuffer tag (type 5), optional (flags bit 0): any mode the loader likes */
    .balign 8
    .short 5
    .short 1
    .long 20
    .long 0                 /* width: no preference */
    .long 0                 /* height */
    .long 32                /* depth */

    /* module alignment tag (type 6): modules page-aligned */
    .balign 8
    .short 6
    .short 0
    .long 8

    /* end tag */
    .balign 8
    .short 0
    .short 0
    .long 8
mb2_header_end:

/* ---- 32-bit trampoline ---- */
    .section .boot.text, "ax"
    .code32
    .global _start_pvh
_start_pvh:
    cli
    cld
    mov $1, %esi                /* protocol: PVH */
    mov $0x336ec578, %edi       /* XEN_HVM_START_MAGIC_VALUE, checked again in Rust */
    jmp common32

    .global _start_mb2
_start_mb2:
    cli
    cld
    mov $2, %esi                /* protocol: Multiboot2 */
    mov %eax, %edi              /* 0x36d76289 if a Multiboot2 loader started us */
    jmp common32

common32:
    mov $boot_stack_top, %esp
    /* keep protocol in %esi, magic in %edi, info pointer in %ebx through the setup */

    /* zero the boot page tables: PML4, PDPT, 4 page directories (6 pages) */
    push %edi
    mov $boot_pml4, %edi
    xor %eax, %eax
    mov $(6 * 4096 / 4), %ecx
    rep stosl
    pop %edi

    /* PML4[0] -> PDPT, PDPT[0..3] -> PD0..PD3: present + writable */
    mov $boot_pdpt, %eax
    or $0x3, %eax
    mov %eax, boot_pml4

    mov $boot_pd, %eax
    or $0x3, %eax
    mov %eax, boot_pdpt
    add $0x1000, %eax
    mov %eax, boot_pdpt + 8
    add $0x1000, %eax
    mov %eax, boot_pdpt + 16
    add $0x1000, %eax
    mov %eax, boot_pdpt + 24

    /* 2048 PD entries of 2 MiB each: identity map of 0..4 GiB, present + writable + PS */
    mov $boot_pd, %edx
    xor %ecx, %ecx
1:
    mov %ecx, %eax
    shl $21, %eax
    or $0x83, %eax
    mov %eax, (%edx,%ecx,8)
    mov %ecx, %eax
    shr $11, %eax               /* high dword: bits 32.. of (ecx << 21) */
    mov %eax, 4(%edx,%ecx,8)
    inc %ecx
    cmp $2048, %ecx
    jne 1b

    mov $boot_pml4, %eax
    mov %eax, %cr3

    /* CR4: PAE (5), OSFXSR (9), OSXMMEXCPT (10) */
    mov %cr4, %eax
    or $((1 << 5) | (1 << 9) | (1 << 10)), %eax
    mov %eax, %cr4

    /* EFER (MSR 0xC0000080): LME (8), NXE (11) */
    mov $0xC0000080, %ecx
    rdmsr
    or $((1 << 8) | (1 << 11)), %eax
    wrmsr

    /* CR0: PE (0), MP (1), clear EM (2), WP (16), PG (31) */
    mov %cr0, %eax
    and $~(1 << 2), %eax
    or $((1 << 0) | (1 << 1) | (1 << 16) | (1 << 31)), %eax
    mov %eax, %cr0

    lgdt boot_gdt_ptr
    ljmp $0x08, $long_mode_entry

    .code64
long_mode_entry:
    mov $0x10, %ax
    mov %ax, %ds
    mov %ax, %es
    mov %ax, %ss
    xor %ax, %ax
    mov %ax, %fs
    mov %ax, %gs

    movabs $boot_stack_top, %rsp
    and $~0xf, %rsp
    xor %ebp, %ebp              /* end of the frame-pointer chain for backtraces */
    /* SysV: rdi = protocol, rsi = magic, rdx = info pointer */
    mov %edi, %eax              /* magic */
    mov %esi, %edi              /* protocol */
    mov %eax, %esi              /* magic */
    mov %ebx, %edx              /* info (zero-extended) */
    call _boot_entry64
2:
    cli
    hlt
    jmp 2b

    .section .boot.data, "aw"
    .balign 16
boot_gdt:
    .quad 0                         /* null */
    .quad 0x00af9a000000ffff        /* 0x08: 64-bit code, present, DPL 0 */
    .quad 0x00cf92000000ffff        /* 0x10: data, present, writable */
boot_gdt_end:
boot_gdt_ptr:
    .short boot_gdt_end - boot_gdt - 1
    .quad boot_gdt

    .section .boot.bss, "aw", @nobits
    .balign 4096
    .global boot_pml4
boot_pml4:
    .skip 4096
boot_pdpt:
    .skip 4096
boot_pd:
    .skip 4 * 4096
    .balign 16
    .global boot_stack_bottom
boot_stack_bottom:
    .skip 256 * 1024
    .global boot_stack_top
boot_stack_top:
