[0004]                          Signature : "IVRS"
[0004]                       Table Length : 00000000
[0001]                           Revision : 02
[0001]                           Checksum : 00
[0006]                             Oem ID : "AMD   "
[0008]                       Oem Table ID : "NVGPUTST"
[0004]                       Oem Revision : 00000001
[0004]                    Asl Compiler ID : "INTL"
[0004]              Asl Compiler Revision : 20200925
[0004]                Virtualization Info : 00203043
[0008]                           Reserved : 0000000000000000

[0001]                      Subtable Type : 11
[0001]                              Flags : B0
[0002]                             Length : 0000
[0002]                           DeviceId : 0002
[0002]                  Capability Offset : 0040
[0008]                       Base Address : 00000000FEB80000
[0002]                  PCI Segment Group : 0000
[0002]                Virtualization Info : 0000
[0004]                         Attributes : 00040200
[0008]                          EFR Image : 246577EFA2254AFA
[0008]                           Reserved : 0000000000000000

[0001]                         Entry Type : 03
[0002]                          Device ID : 0008
[0001]                       Data Setting : 00

[0001]                         Entry Type : 04
[0002]                          Device ID : 00FE
[0001]                       Data Setting : 00

[0001]                         Entry Type : 02
[0002]                          Device ID : 0010
[0001]                       Data Setting : D7

[0001]                         Entry Type : 42
[0002]                          Device ID : 00A0
[0001]                       Data Setting : 00
[0001]                           Reserved : 00
[0002]              Source Used Device ID : 00A4
[0001]                           Reserved : 00

[0001]                         Entry Type : 46
[0002]                          Device ID : 0100
[0001]                       Data Setting : 00
[0004]                      Extended Data : 80000000

[0001]                         Entry Type : 48
[0002]                          Device ID : 0000
[0001]                       Data Setting : D7
[0001]                             Handle : 21
[0002]              Source Used Device ID : 00A0
[0001]                            Variety : 01

[0001]                         Entry Type : 48
[0002]                          Device ID : 0000
[0001]                       Data Setting : 00
[0001]                             Handle : 00
[0002]              Source Used Device ID : 00A5
[0001]                            Variety : 02

[0001]                      Subtable Type : 10 [Hardware Definition Block]
[0001]                              Flags : 3E
[0002]                             Length : 0000
[0002]                           DeviceId : 4002
[0002]                  Capability Offset : 0044
[0008]                       Base Address : 00000000FD200000
[0002]                  PCI Segment Group : 0001
[0002]                Virtualization Info : 1300
[0004]                  Feature Reporting : 80048F6E

[0001]                         Entry Type : 01
[0002]                          Device ID : 0000
[0001]                       Data Setting : 00

[0001]                      Subtable Type : 21 [Memory Definition Block]
[0001]                              Flags : 07
[0002]                             Length : 0020
[0002]                           DeviceId : 0010
[0002]                     Auxiliary Data : 0000
[0008]                           Reserved : 0000000000000000
[0008]                      Start Address : 00000000BF000000
[0008]                      Memory Length : 0000000000100000

[0001]                      Subtable Type : 22 [Memory Definition Block]
[0001]                              Flags : 05
[0002]                             Length : 0020
[0002]                           DeviceId : 0100
[0002]                     Auxiliary Data : 01FF
[0008]                           Reserved : 0000000000000000
[0008]                      Start Address : 00000000C0000000
[0008]                      Memory Length : 0000000000004000
