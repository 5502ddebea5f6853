/*
 * A fake kernel that speaks the kernel's serial contract, for testing cargo xtask's QEMU plumbing
 * without the real kernel: `cargo xtask selftest` boots it on every suite case.
 *
 * It boots by PVH (QEMU -kernel; Xen's hvm_start_info in EBX) and by Multiboot2 (GRUB, BIOS or
 * UEFI; the boot information in EBX), both entered in 32-bit protected mode with paging off. It
 * then:
 *   - enumerates PCI by brute force through the 0xCF8/0xCFC configuration ports (every bus, device
 *     and function), printing one `pci 0000:BB:DD.F [VVVV:DDDD] class CCCCCC` line per function;
 *   - prints `pci: scan complete, N functions` and, if the command line holds `pci-handshake`,
 *     `; waiting for host`, then waits (without limit: the host harness has the timeout) for one
 *     byte on COM1;
 *   - looks for the ACPI RSDP where the kernel does (the loader's pointer: PVH's rsdp_paddr or
 *     Multiboot2's ACPI tags; then the BIOS area 0xE0000-0xFFFFF) and prints the kernel's
 *     `acpi: MADT: N CPUs (...)` line when there is one (N is 0: the fake reads no tables), its
 *     `booting without ACPI` line when there is none or `fake-no-acpi` is on the command line;
 *   - prints `platform ready in 1 ms` and two in-kernel test lines in the ktest format;
 *   - exits through isa-debug-exit (port 0xf4): 0x10 (pass) or, with `fake-fail` on the command
 *     line, a failing test line and 0x11.
 * With `fake-pci-extra` on the command line it also reports a PCI function that does not exist,
 * which the harness's PCI cross-check must catch. Each `fake-ktest=NAME` word adds a passing
 * test line `ktest NAME ... ok (1 ms)` (the selftest passes the ktests each case exists for).
 * A command line starting with `app ` prints the example application's report instead of the
 * tests (every example ok, the managed-memory lines) and exits 0x10; `fault=pagefault` prints a
 * page-fault exception report and exits 0x11, as the kernel does; one starting with `probe`
 * prints a read-only dump of a model GH100 and TU102 ending `probe: 0 register writes`, exit 0x10.
 *
 * Written in assembly so that it needs nothing but the C toolchain the kernel build already uses.
 */
    .intel_syntax noprefix

    .set COM1, 0x3f8
    .set PCI_ADDR, 0xcf8
    .set PCI_DATA, 0xcfc
    .set DEBUG_EXIT, 0xf4
    .set MB2_MAGIC, 0xe85250d6
    .set MB2_BOOT_MAGIC, 0x36d76289
    .set PVH_MAGIC, 0x336ec578

/* Multiboot2 header: i386 architecture, no tags but the end tag. */
    .section .multiboot2_header, "a"
    .balign 8
mb2_header:
    .long MB2_MAGIC
    .long 0
    .long mb2_header_end - mb2_header
    .long -(MB2_MAGIC + (mb2_header_end - mb2_header))
    .balign 8
    .short 0
    .short 0
    .long 8
mb2_header_end:

/* PVH entry note: XEN_ELFNOTE_PHYS32_ENTRY (18), name "Xen", an 8-byte descriptor. */
    .section .note.Xen, "a", @note
    .balign 4
    .long 4
    .long 8
    .long 18
    .asciz "Xen"
    .balign 4
    .quad _start_pvh

    .code32
    .text

    .global _start_mb2
_start_mb2:
    mov esp, offset stack_top
    mov dword ptr [cmdline], offset empty
    mov dword ptr [rsdp], 0
    cmp eax, MB2_BOOT_MAGIC
    jne main
    /* Boot information: total size, reserved, then 8-byte aligned tags (type, size, ...). */
    lea esi, [ebx + 8]
1:  mov eax, [esi]
    test eax, eax
    jz main
    cmp eax, 14                     /* ACPI old RSDP: a copy of it at +8 */
    je 3f
    cmp eax, 15                     /* ACPI new RSDP */
    je 3f
    cmp eax, 1
    je 2f
    jmp 4f
3:  lea eax, [esi + 8]
    mov [rsdp], eax
4:  mov eax, [esi + 4]
    add eax, 7
    and eax, ~7
    add esi, eax
    jmp 1b
2:  lea eax, [esi + 8]
    mov [cmdline], eax
    jmp 4b

    .global _start_pvh
_start_pvh:
    mov esp, offset stack_top
    mov dword ptr [cmdline], offset empty
    mov dword ptr [rsdp], 0
    cmp dword ptr [ebx], PVH_MAGIC
    jne main
    /* hvm_start_info: rsdp_paddr at +32 from version 1 on. */
    cmp dword ptr [ebx + 4], 1
    jb 1f
    mov eax, [ebx + 32]
    mov [rsdp], eax
1:  mov eax, [ebx + 24]
    test eax, eax
    jz main
    mov [cmdline], eax
    /* fall through */

main:
    call serial_init
    mov esi, offset msg_hello
    call puts
    mov esi, [cmdline]
    call puts
    call newline

    call pci_scan
    mov esi, [cmdline]
    mov edi, offset word_pci_extra
    call contains
    test eax, eax
    jz 7f
    mov esi, offset msg_pci_extra
    call puts
    inc dword ptr [functions]
7:

    mov esi, offset msg_scan
    call puts
    mov eax, [functions]
    call put_dec
    mov esi, offset msg_functions
    call puts
    mov esi, [cmdline]
    mov edi, offset word_handshake
    call contains
    test eax, eax
    jz 3f
    mov esi, offset msg_waiting
    call puts
    call newline
    mov dx, COM1 + 5
4:  in al, dx
    test al, 1
    jz 4b
    mov dx, COM1
    in al, dx
    mov esi, offset msg_host_answered
    call puts
3:  call newline

    call report_acpi
    mov esi, offset msg_ready
    call puts
    mov esi, [cmdline]
    mov edi, offset word_pagefault
    call contains
    test eax, eax
    jz 8f
    mov esi, offset msg_fault_report
    call puts
    mov eax, 0x11
    jmp exit
8:  mov esi, [cmdline]
    cmp dword ptr [esi], 0x626f7270     /* "prob" */
    jne 7f
    mov esi, offset msg_probe
    call puts
    mov eax, 0x10
    jmp exit
7:  mov esi, [cmdline]
    cmp dword ptr [esi], 0x20707061     /* "app " */
    jne 9f
    mov esi, offset msg_app
    call puts
    mov eax, 0x10
    jmp exit
9:  call count_ktests
    mov esi, offset msg_running
    call puts
    mov eax, [extra_ktests]
    add eax, 2
    call put_dec
    mov esi, offset msg_tests
    call puts
    mov esi, [cmdline]
    mov edi, offset word_fail
    call contains
    test eax, eax
    jnz 5f
    mov esi, offset msg_tests_pass
    call puts
    call print_ktests
    mov esi, offset msg_result
    call puts
    mov eax, [extra_ktests]
    add eax, 2
    call put_dec
    mov esi, offset msg_passed
    call puts
    mov eax, 0x10
    jmp exit
5:  mov esi, offset msg_tests_fail
    call puts
    call print_ktests
    mov esi, offset msg_result
    call puts
    mov eax, [extra_ktests]
    inc eax
    call put_dec
    mov esi, offset msg_failed_one
    call puts
    mov eax, 0x11
exit:
    mov dx, DEBUG_EXIT
    out dx, eax
6:  cli
    hlt
    jmp 6b

/* report_acpi: the RSDP from the loader, else one found in the BIOS area, or the kernel's
   line for booting without ACPI (also with `fake-no-acpi`, which the selftest uses to check that
   the harness notices). */
report_acpi:
    mov esi, [cmdline]
    mov edi, offset word_no_acpi
    call contains
    test eax, eax
    jnz 3f
    mov eax, [rsdp]
    test eax, eax
    jnz 2f
    mov eax, 0xe0000
1:  cmp dword ptr [eax], 0x20445352 /* "RSD " */
    jne 4f
    cmp dword ptr [eax + 4], 0x20525450 /* "PTR " */
    je 2f
4:  add eax, 16
    cmp eax, 0x100000
    jb 1b
    jmp 3f
2:  push eax
    mov esi, offset msg_madt
    call puts
    pop eax
    mov ecx, 8
    call put_hex
    mov esi, offset msg_madt_end
    call puts
    ret
3:  mov esi, offset msg_no_acpi
    call puts
    ret

/* count_ktests: the number of `fake-ktest=` words in the command line, into extra_ktests. */
count_ktests:
    mov dword ptr [extra_ktests], 0
    mov esi, [cmdline]
1:  mov edi, offset word_ktest
    call find
    test eax, eax
    jz 2f
    inc dword ptr [extra_ktests]
    mov esi, eax
    jmp 1b
2:  ret

/* print_ktests: `ktest NAME ... ok (1 ms)` for each `fake-ktest=NAME` word. */
print_ktests:
    mov esi, [cmdline]
1:  mov edi, offset word_ktest
    call find
    test eax, eax
    jz 4f
    push eax
    mov esi, offset msg_ktest
    call puts
    pop esi
2:  mov al, [esi]
    test al, al
    jz 3f
    cmp al, ' '
    je 3f
    push esi
    call putc
    pop esi
    inc esi
    jmp 2b
3:  push esi
    mov esi, offset msg_ktest_ok
    call puts
    pop esi
    jmp 1b
4:  ret

/* Brute-force scan of every bus, device and function through the configuration ports. */
pci_scan:
    xor ebx, ebx                    /* bus << 16 | device << 11 | function << 8 */
1:  mov eax, ebx
    or eax, 0x80000000
    mov dx, PCI_ADDR
    out dx, eax
    mov dx, PCI_DATA
    in eax, dx
    cmp ax, 0xffff
    je 3f
    mov [vendor_device], eax
    mov eax, ebx
    or eax, 0x80000008
    mov dx, PCI_ADDR
    out dx, eax
    mov dx, PCI_DATA
    in eax, dx
    shr eax, 8
    mov [class_code], eax
    call print_function
    inc dword ptr [functions]
    /* Function 0 of a single-function device: skip functions 1..7. */
    test ebx, 0x700
    jnz 2f
    mov eax, ebx
    or eax, 0x8000000c
    mov dx, PCI_ADDR
    out dx, eax
    mov dx, PCI_DATA
    in eax, dx
    test eax, 0x800000
    jz 4f
2:  add ebx, 0x100
    jmp 5f
3:  test ebx, 0x700                 /* no function 0: no device */
    jnz 2b
4:  add ebx, 0x800
    and ebx, ~0x700
5:  cmp ebx, 0x1000000
    jb 1b
    ret

print_function:
    mov esi, offset msg_pci
    call puts
    mov eax, ebx
    shr eax, 16
    mov ecx, 2
    call put_hex
    mov al, ':'
    call putc
    mov eax, ebx
    shr eax, 11
    and eax, 0x1f
    mov ecx, 2
    call put_hex
    mov al, '.'
    call putc
    mov eax, ebx
    shr eax, 8
    and eax, 7
    mov ecx, 1
    call put_hex
    mov al, ' '
    call putc
    mov al, '['
    call putc
    mov eax, [vendor_device]
    mov ecx, 4
    call put_hex
    mov al, ':'
    call putc
    mov eax, [vendor_device]
    shr eax, 16
    mov ecx, 4
    call put_hex
    mov esi, offset msg_class
    call puts
    mov eax, [class_code]
    mov ecx, 6
    call put_hex
    call newline
    mov esi, offset msg_bar_line
    call puts
    ret

serial_init:
    mov dx, COM1 + 1
    xor al, al
    out dx, al                      /* no interrupts */
    mov dx, COM1 + 3
    mov al, 0x80
    out dx, al                      /* divisor latch */
    mov dx, COM1
    mov al, 1
    out dx, al                      /* 115200 baud */
    mov dx, COM1 + 1
    xor al, al
    out dx, al
    mov dx, COM1 + 3
    mov al, 3
    out dx, al                      /* 8N1 */
    mov dx, COM1 + 2
    mov al, 0xc7
    out dx, al                      /* FIFOs on and cleared */
    mov dx, COM1 + 4
    mov al, 0x0b
    out dx, al                      /* DTR, RTS, OUT2 */
    ret

/* putc: AL. Clobbers EDX. */
putc:
    push eax
    mov dx, COM1 + 5
1:  in al, dx
    test al, 0x20
    jz 1b
    pop eax
    mov dx, COM1
    out dx, al
    ret

/* puts: NUL-terminated string at ESI. Clobbers EAX, EDX, ESI. */
puts:
1:  mov al, [esi]
    test al, al
    jz 2f
    call putc
    inc esi
    jmp 1b
2:  ret

newline:
    mov al, 13
    call putc
    mov al, 10
    call putc
    ret

/* put_hex: the low ECX nibbles of EAX, lowercase, most significant first. */
put_hex:
    push ebx
    mov ebx, eax
1:  dec ecx
    mov eax, ebx
    push ecx
    shl ecx, 2
    shr eax, cl
    pop ecx
    and eax, 0xf
    mov al, [hex_digits + eax]
    call putc
    test ecx, ecx
    jnz 1b
    pop ebx
    ret

/* put_dec: EAX in decimal. */
put_dec:
    push ebx
    mov ebx, 10
    xor ecx, ecx
1:  xor edx, edx
    div ebx
    push edx
    inc ecx
    test eax, eax
    jnz 1b
2:  pop eax
    add al, '0'
    push ecx
    call putc
    pop ecx
    loop 2b
    pop ebx
    ret

/* find: EAX = the address just past the first occurrence in the NUL-terminated string at ESI
   of the one at EDI, or 0. */
find:
    push ebx
1:  xor ecx, ecx
2:  mov al, [edi + ecx]
    test al, al
    jz 4f
    mov bl, [esi + ecx]
    cmp al, bl
    jne 3f
    inc ecx
    jmp 2b
3:  cmp byte ptr [esi], 0
    je 5f
    inc esi
    jmp 1b
4:  lea eax, [esi + ecx]
    pop ebx
    ret
5:  xor eax, eax
    pop ebx
    ret

/* contains: EAX = 1 if the NUL-terminated string at ESI contains the one at EDI, else 0. */
contains:
    call find
    test eax, eax
    setnz al
    movzx eax, al
    ret

    .section .rodata
hex_digits:         .ascii "0123456789abcdef"
empty:              .asciz ""
word_handshake:     .asciz "pci-handshake"
word_fail:          .asciz "fake-fail"
word_pci_extra:     .asciz "fake-pci-extra"
msg_pci_extra:      .asciz "[       0 ms] INFO  pci: pci 0000:00:1e.0 [dead:beef] class 0b4000\r\n"
msg_hello:          .asciz "[       0 ms] INFO  fake kernel for cargo xtask selftest; command line: "
msg_pci:            .asciz "[       0 ms] INFO  pci: pci 0000:"
msg_class:          .asciz "] class "
msg_bar_line:       .asciz "                 (fake kernel: BARs not decoded)\r\n"
msg_scan:           .asciz "[       0 ms] INFO  pci: scan complete, "
msg_functions:      .asciz " functions"
msg_waiting:        .asciz "; waiting for host"
msg_host_answered:  .asciz "[       0 ms] INFO  pci: host answered"
msg_ready:          .asciz "[       1 ms] INFO  platform ready in 1 ms\r\n"
word_no_acpi:       .asciz "fake-no-acpi"
msg_madt:           .asciz "[       1 ms] INFO  acpi: MADT: 0 CPUs (fake kernel: the RSDP is at 0x"
msg_madt_end:       .asciz ", no table is read)\r\n"
msg_no_acpi:        .asciz "[       1 ms] WARN  acpi: no RSDP from the loader and none in the BIOS areas (fake kernel): booting without ACPI\r\n"
word_ktest:         .asciz "fake-ktest="
word_pagefault:     .asciz "fault=pagefault"
msg_running:        .asciz "[       1 ms] INFO  ktest: running "
msg_tests:          .asciz " tests\r\n"
msg_ktest:          .asciz "[       1 ms] INFO  ktest "
msg_ktest_ok:       .asciz " ... ok (1 ms)\r\n"
msg_result:         .asciz "[       1 ms] INFO  ktest result: "
msg_passed:         .asciz " passed, 0 failed\r\n"
msg_tests_pass:     .ascii "[       1 ms] INFO  ktest fake::serial ... ok\r\n"
                    .asciz "[       1 ms] INFO  ktest fake::pci_scan ... ok\r\n"
msg_fault_report:   .ascii "[       1 ms] ERROR EXCEPTION vector 14 (#PF page fault), error code 0x0\r\n"
                    .ascii "[       1 ms] ERROR   cr2 0xffff90000badf000 (page not present on read data access)\r\n"
                    .ascii "[       1 ms] ERROR   rip 0x0000000000200000 rsp 0x0000000000300000 rflags 0x2\r\n"
                    .ascii "[       1 ms] ERROR   rax 0x0000000000000000 rbx 0x0000000000000000\r\n"
                    .ascii "[       1 ms] ERROR   backtrace:\r\n"
                    .asciz "[       1 ms] ERROR     0x0000000000200000 kernel::kernel_main+0x10 (fake)\r\n"
msg_app:            .ascii "[       5 ms] INFO  kernel: timeline json: {\"phase\":\"boot\",\"stages\":[{\"stage\":\"platform ready\",\"gpu\":null,\"ms\":1.000},{\"stage\":\"GPU foundation\",\"gpu\":0,\"ms\":2.000},{\"stage\":\"GSP-RM up\",\"gpu\":0,\"ms\":3.000},{\"stage\":\"boot done\",\"gpu\":null,\"ms\":4.000}],\"dropped\":0}\r\n"
                    .ascii "[      10 ms] INFO  app: vector_add: ok (fake)\r\n"
                    .ascii "[      11 ms] INFO  app: saxpy: ok (fake)\r\n"
                    .ascii "[      12 ms] INFO  app: matmul: ok (fake)\r\n"
                    .ascii "[      13 ms] INFO  app: reduce: ok (fake)\r\n"
                    .ascii "[      14 ms] INFO  app: histogram: ok (fake)\r\n"
                    .ascii "[      15 ms] INFO  app: mandelbrot: ok (fake)\r\n"
                    .ascii "[      16 ms] INFO  app: managed: ok (fake)\r\n"
                    .ascii "[      16 ms] INFO  app: managed: 3 CPU page faults served through uvm, 12288 bytes migrated back from the GPU by them\r\n"
                    .ascii "[      16 ms] INFO  app: managed stats: {\"gpu_faults\":1,\"replays\":1,\"cancels\":0,\"evictions\":1,\"migrated_to_gpu_bytes\":4096,\"migrated_to_cpu_bytes\":12288,\"cpu_faults\":3}\r\n"
                    .ascii "[      17 ms] INFO  app: 6 passed, 0 failed\r\n"
                    .asciz "[      18 ms] INFO  kernel: timeline json: {\"phase\":\"application\",\"stages\":[{\"stage\":\"platform ready\",\"gpu\":null,\"ms\":1.000},{\"stage\":\"GPU foundation\",\"gpu\":0,\"ms\":2.000},{\"stage\":\"GSP-RM up\",\"gpu\":0,\"ms\":3.000},{\"stage\":\"boot done\",\"gpu\":null,\"ms\":4.000},{\"stage\":\"GPU opened\",\"gpu\":null,\"ms\":10.000},{\"stage\":\"compute stream created\",\"gpu\":null,\"ms\":11.000},{\"stage\":\"first result\",\"gpu\":null,\"ms\":12.000},{\"stage\":\"examples done\",\"gpu\":null,\"ms\":13.000},{\"stage\":\"managed example done\",\"gpu\":null,\"ms\":14.000},{\"stage\":\"application finished\",\"gpu\":null,\"ms\":15.000}],\"dropped\":0}\r\n"
msg_probe:          .ascii "[       5 ms] INFO  probe: model gpu0 (gh100): BOOT0 0x180000a1, BOOT42 0x180a1000: GH100 (Hopper) rev A1 (fake)\r\n"
                    .ascii "[       5 ms] INFO  probe: model gpu0 (gh100): VBIOS: 3 ROM images, version 96.01.80.00.5E (fake)\r\n"
                    .ascii "[       5 ms] INFO  probe: model gpu0 (gh100): the model saw 0 register writes\r\n"
                    .ascii "[       6 ms] INFO  probe: model gpu1 (tu102): BOOT0 0x162000a1, BOOT42 0x162a1000: TU102 (Turing) rev A1 (fake)\r\n"
                    .ascii "[       6 ms] INFO  probe: model gpu1 (tu102): VBIOS: 3 ROM images, version 90.01.62.00.5E (fake)\r\n"
                    .ascii "[       6 ms] INFO  probe: model gpu1 (tu102): the model saw 0 register writes\r\n"
                    .asciz "[       7 ms] INFO  probe: 0 register writes\r\n"
msg_tests_fail:     .ascii "[       1 ms] INFO  ktest fake::serial ... ok\r\n"
                    .asciz "[       1 ms] ERROR ktest fake::pci_scan ... FAILED: asked to fail\r\n"
msg_failed_one:     .asciz " passed, 1 failed\r\n"

    .bss
    .balign 16
cmdline:        .long 0
rsdp:           .long 0
functions:      .long 0
extra_ktests:   .long 0
vendor_device:  .long 0
class_code:     .long 0
    .balign 16
stack:          .skip 16384
stack_top:
