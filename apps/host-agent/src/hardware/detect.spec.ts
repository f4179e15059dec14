import { cpuGhz } from './detect';

// /proc/cpuinfo as an H100 cloud VM shows it (its first lines), where Node's os.cpus() reports speed 0.
const H100_VM_CPUINFO = [
  'processor\t: 0',
  'vendor_id\t: GenuineIntel',
  'cpu family\t: 6',
  'model name\t: Intel(R) Xeon(R) Processor',
  'stepping\t: 8',
  'cpu MHz\t\t: 2100.000',
  'cache size\t: 16384 KB',
  'bogomips\t: 4200.00',
].join('\n');

describe('the CPU clock a host registers', () => {
  it("is Node's speed when Node has one", () => {
    expect(cpuGhz(3493, H100_VM_CPUINFO)).toBe(3.5);
  });

  it('comes from /proc/cpuinfo when Node reports 0 (a VM without cpufreq)', () => {
    expect(cpuGhz(0, H100_VM_CPUINFO)).toBe(2.1);
  });

  it('is 0 when neither says (no /proc/cpuinfo, or no MHz line in it)', () => {
    expect(cpuGhz(0, '')).toBe(0);
    expect(cpuGhz(0, 'processor\t: 0\nmodel name\t: ARMv8 Processor rev 0 (v8l)\nBogoMIPS\t: 50.00')).toBe(0);
  });
});
