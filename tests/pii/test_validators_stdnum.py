"""lib/pii's validators next to their oracles, value by value: python-stdnum
(Debian's python3-stdnum 1.18, which scripts/setup.sh installs: luhn,
iban with check_country=False, us.ssn, us.itin, us.rtn, gb.nhs, mac with
validate_manufacturer=False) and Python's ipaddress (IPv4Address,
IPv4Interface, IPv6Address, IPv6Interface). For each validator the test
builds, with a fixed seed, at least 10,000 values the oracle accepts and
10,000 it rejects (numbers with valid check digits in stdnum's accepted
layouts, Unicode look-alikes and whitespace, then one character changed,
neighbours swapped, wrong lengths, wrong countries, letters where digits
belong), runs pii_validate_probe on all of them and requires every verdict
to be the oracle's. It also compares stdnum's character map, Python's strip,
the ASCII-making uppercase letters and int()'s decimal digits over every
code point, and the IBAN registry with stdnum's iban.dat."""
import ipaddress
import os
import random
import re
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from nss_e2e import binary  # noqa: E402

try:
    import stdnum
    from stdnum import iban, luhn, mac
    from stdnum.gb import nhs
    from stdnum.us import itin, rtn, ssn
    from stdnum.util import _char_map, clean
    STDNUM_MISSING = None if stdnum.__version__ == "1.18" else (
        "python-stdnum %s; lib/pii's tables are 1.18's (Debian 12's python3-stdnum)" % stdnum.__version__)
except ImportError as error:
    STDNUM_MISSING = "%s: install python3-stdnum (scripts/setup.sh does)" % error

SEED = 36
MIN_EACH = 10000
DIGITS = "0123456789"
UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
HEX = "0123456789abcdef"
SPACES = [" ", "\t", "\n", "\u00a0", "\u3000", "\u2009", "\u0085"]
DASHES = ["\u2010", "\u2013", "\u2014", "\u2212", "\ufe63", "\uff0d"]
FULLWIDTH = {d: chr(0xFF10 + int(d)) for d in DIGITS}
ARABIC_INDIC = {d: chr(0x0660 + int(d)) for d in DIGITS}

# The oracles, by the probe's names.
ORACLES = {
    "luhn": lambda s: luhn.is_valid(s),
    "iban": lambda s: iban.is_valid(s, check_country=False),
    "ssn": lambda s: ssn.is_valid(s),
    "itin": lambda s: itin.is_valid(s),
    "aba": lambda s: rtn.is_valid(s),
    "nhs": lambda s: nhs.is_valid(s),
    "mac": lambda s: mac.is_valid(s, validate_manufacturer=False),
}


def accepts(constructor):
    def oracle(text):
        try:
            constructor(text)
            return True
        except ValueError:
            return False
    return oracle


IP_ORACLES = {
    "ipv4": accepts(ipaddress.IPv4Address),
    "ipv4_interface": accepts(ipaddress.IPv4Interface),
    "ipv6": accepts(ipaddress.IPv6Address),
    "ipv6_interface": accepts(ipaddress.IPv6Interface),
}


def probe(requests):
    """pii_validate_probe's answers to [(name, text)], one per request."""
    stdin = "".join("%s %s\n" % (name, text.encode("utf-8").hex()) for name, text in requests)
    proc = subprocess.run([binary("pii_validate_probe")], input=stdin, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    answers = proc.stdout.split("\n")[:-1]
    assert len(answers) == len(requests), (len(answers), len(requests))
    return answers


# --- mutations -----------------------------------------------------------------------------------

def change_one(rng, text, alphabet):
    positions = [i for i, c in enumerate(text) if c in alphabet]
    if not positions:
        return text + rng.choice(alphabet)
    i = rng.choice(positions)
    return text[:i] + rng.choice([c for c in alphabet if c != text[i]]) + text[i + 1:]


def swap_neighbours(rng, text):
    if len(text) < 2:
        return text + text
    i = rng.randrange(len(text) - 1)
    return text[:i] + text[i + 1] + text[i] + text[i + 2:]


def grow_or_shrink(rng, text, alphabet):
    if len(text) > 2 and rng.random() < 0.5:
        i = rng.randrange(len(text))
        return text[:i] + text[i + rng.choice([1, 2]):]
    i = rng.randrange(len(text) + 1)
    return text[:i] + "".join(rng.choice(alphabet) for _ in range(rng.choice([1, 2]))) + text[i:]


def stray_character(rng, text):
    i = rng.randrange(len(text) + 1)
    return text[:i] + rng.choice("xZ/_#+.,;'\"\x00\u00e9\u0661\u00b2 \t") + text[i:]


def surround(rng, text):
    return rng.choice(SPACES + [""]) + text + rng.choice(SPACES + ["", "\n"])


def look_alike_digits(rng, text):
    table = rng.choice([FULLWIDTH, ARABIC_INDIC])
    return "".join(table[c] if c in table and rng.random() < 0.3 else c for c in text)


# --- corpora -------------------------------------------------------------------------------------

def luhn_corpus(rng):
    values = ["", "0", "00", "1", "18", "4111 1111 1111 1111", "4111-1111-1111-1111", "a",
              "4111111111111111\n", " 4111111111111111", "\uff14111111111111111", "0" * 5000]
    for _ in range(12000):
        prefix = "".join(rng.choice(DIGITS) for _ in range(rng.randint(0, 18)))
        valid = prefix + luhn.calc_check_digit(prefix)
        values.append(valid)
        values.append(change_one(rng, valid, DIGITS))
        values.append(rng.choice([swap_neighbours(rng, valid), valid.replace("09", "90", 1),
                                  grow_or_shrink(rng, valid, DIGITS), stray_character(rng, valid),
                                  surround(rng, valid), look_alike_digits(rng, valid)]))
    return values


def iban_registry():
    path = os.path.join(os.path.dirname(stdnum.__file__), "iban.dat")
    with open(path, encoding="utf-8") as f:
        return re.findall(r'^([A-Z]{2}) .*bban="([^"]+)"', f.read(), re.M)


def random_bban(rng, structure):
    pools = {"n": DIGITS, "a": UPPER, "c": DIGITS + UPPER}
    return "".join(rng.choice(pools[kind]) for count, kind in re.findall(r"(\d+)!([nac])", structure)
                   for _ in range(int(count)))


def make_iban(country, bban):
    return country + iban.calc_check_digits(country + "00" + bban) + bban


# str.upper() of these is ASCII, so stdnum reads them as the letters.
UPPERCASE_QUIRKS = [("SS", "\u00df"), ("S", "\u017f"), ("I", "\u0131"), ("FFI", "\ufb03"),
                    ("FFL", "\ufb04"), ("FF", "\ufb00"), ("FI", "\ufb01"), ("FL", "\ufb02"),
                    ("ST", "\ufb05"), ("ST", "\ufb06")]


def iban_layout(rng, number):
    """One of the ways people and stdnum write an IBAN."""
    grouped = " ".join(number[i:i + 4] for i in range(0, len(number), 4))
    choice = rng.randrange(8)
    if choice == 0:
        return number
    if choice == 1:
        return grouped
    if choice == 2:
        return grouped.lower()
    if choice == 3:
        return grouped.replace(" ", rng.choice(["-", ".", "", "\u00a0", " - "] + DASHES))
    if choice == 4:
        return surround(rng, rng.choice([number, grouped]))
    if choice == 5:
        return look_alike_digits(rng, number)
    if choice == 6:
        plain, quirk = rng.choice(UPPERCASE_QUIRKS)
        return number[:2].replace(plain, quirk) + number[2:4] + number[4:].replace(plain, quirk)
    digits = rng.choice([ARABIC_INDIC, FULLWIDTH, {d: chr(0x0966 + int(d)) for d in DIGITS}])
    return number[:2] + "".join(digits[c] for c in number[2:4]) + number[4:]


def iban_mistake(rng, number, registry):
    country, bban = number[:2], number[4:]
    choice = rng.randrange(9)
    if choice == 0:
        return change_one(rng, number, DIGITS + UPPER)
    if choice == 1:
        return swap_neighbours(rng, number)
    if choice == 2:
        return grow_or_shrink(rng, number, DIGITS)
    if choice == 3:  # wrong length, check digits recomputed: only the structure fails
        return make_iban(country, grow_or_shrink(rng, bban, DIGITS))
    if choice == 4:  # an unknown country, or another country's structure
        other = rng.choice(["XX", "ZZ", "US", "AA", "FK", "OM"] + [c for c, _ in registry])
        return make_iban(other, bban)
    if choice == 5:  # a letter where the structure wants a digit, check digits recomputed
        return make_iban(country, change_one(rng, bban, UPPER))
    if choice == 6:  # letters as check digits: a few pass mod 97
        return country + rng.choice(UPPER) + rng.choice(DIGITS + UPPER) + bban
    if choice == 7:
        return stray_character(rng, number)
    return number.replace(" ", "\t") + rng.choice(["\u200b", "\u00ad", "!", "\u2028x"])


def iban_corpus(rng):
    registry = iban_registry()
    values = ["", "1", "GB", "GB82", "gr16-0110.1050 0000 1054 7023 795", "GB82WEST12345698765432",
              "GB\u0668\u0662WEST12345698765432", "GB58we\u00df12345698765432", "\u0131\u017f"]
    for i in range(13000):
        country, structure = registry[i % len(registry)]
        number = make_iban(country, random_bban(rng, structure))
        values.append(iban_layout(rng, number))
        values.append(iban_mistake(rng, number, registry))
    return values


def tin_layout(rng, digits):
    area, group, serial = digits[:3], digits[3:5], digits[5:]
    dash = rng.choice(["-"] * 6 + DASHES)
    choice = rng.randrange(9)
    if choice < 3:
        return "%s-%s-%s" % (area, group, serial)
    if choice == 3:
        return digits
    if choice == 4:
        return rng.choice(["%s-%s%s", "%s%s-%s"]) % (area, group, serial)
    if choice == 5:
        return "%s%s%s%s%s" % (area, dash, group, dash, serial)
    if choice == 6:
        return surround(rng, "%s-%s-%s" % (area, group, serial))
    if choice == 7:
        return look_alike_digits(rng, "%s-%s-%s" % (area, group, serial))
    return "%s%s%s%s%s" % (area, rng.choice([" ", ".", "--", "/"]), group,
                           rng.choice([" ", ".", "-"]), serial)


def tin_mistake(rng, text):
    return rng.choice([change_one(rng, text, DIGITS + "-"), swap_neighbours(rng, text),
                       grow_or_shrink(rng, text, DIGITS), stray_character(rng, text),
                       text[:4] + text[4:].replace("-", "", 1), "-" + text, text + "-"])


def ssn_digits(rng, valid):
    area = rng.choice([a for a in range(1, 900) if a != 666])
    group, serial = rng.randint(1, 99), rng.randint(1, 9999)
    if not valid:
        which = rng.randrange(4)
        area = rng.choice([0, 666, rng.randint(900, 999)]) if which == 0 else area
        group = 0 if which == 1 else group
        serial = 0 if which == 2 else serial
        if which == 3:
            return rng.choice(["078051120", "457555462", "219099999"])
    return "%03d%02d%04d" % (area, group, serial)


def ssn_corpus(rng):
    values = ["", " ", "078-05-1120", " 078-05-1120", "078\u201305\u20131120", "078051120",
              " 078051120", "123-45-6789", "1112-23333", "536-90-4399\n", "536904399\u3000"]
    for _ in range(22000):
        valid = ssn_digits(rng, rng.random() < 0.65)
        layout = tin_layout(rng, valid)
        values.append(layout)
        if rng.random() < 0.4:
            values.append(tin_mistake(rng, layout))
    return values


def itin_corpus(rng):
    allowed = [g for g in range(70, 100) if g not in (89, 93)]
    values = ["", "912-90-3456", "9129-03456", "123-45-6789", "912-93-4567", "912-55-3456"]
    for _ in range(28000):
        if rng.random() < 0.6:
            group = rng.choice(allowed)
        else:
            group = rng.choice([g for g in range(100) if g not in allowed])
        area = rng.randint(900, 999) if rng.random() < 0.9 else rng.randint(0, 899)
        layout = tin_layout(rng, "%03d%02d%04d" % (area, group, rng.randint(0, 9999)))
        values.append(layout)
        if rng.random() < 0.3:
            values.append(tin_mistake(rng, layout))
    return values


def aba_check(digits8):
    d = [int(c) for c in digits8]
    return str((7 * (d[0] + d[3] + d[6]) + 3 * (d[1] + d[4] + d[7]) + 9 * (d[2] + d[5])) % 10)


def aba_corpus(rng):
    values = ["", "111000025", "11100002", "11100002B", "112000025", "111 000 025"]
    for _ in range(12000):
        prefix = "".join(rng.choice(DIGITS) for _ in range(8))
        valid = prefix + aba_check(prefix)
        values.append(rng.choice([valid, valid, surround(rng, valid), look_alike_digits(rng, valid)]))
        values.append(rng.choice([change_one(rng, valid, DIGITS), swap_neighbours(rng, valid),
                                  grow_or_shrink(rng, valid, DIGITS), stray_character(rng, valid),
                                  valid[:3] + rng.choice(["-", " "] + DASHES) + valid[3:]]))
    return values


def nhs_corpus(rng):
    values = ["", "943-476-5870", "9434765871", "943 476 5870", "943.476.5870"]
    while len(values) < 26000:
        digits = "".join(rng.choice(DIGITS) for _ in range(9))
        check = -sum(w * int(c) for w, c in zip(range(10, 1, -1), digits)) % 11
        if check == 10:
            values.append(digits + rng.choice(DIGITS))  # no check digit fits
            continue
        valid = digits + str(check)
        sep = rng.choice([" ", "-", "", " - "] + DASHES + ["\u00a0"])
        layout = rng.choice([valid, valid[:3] + sep + valid[3:6] + sep + valid[6:],
                             surround(rng, valid), look_alike_digits(rng, valid)])
        values.append(layout)
        values.append(rng.choice([change_one(rng, valid, DIGITS), swap_neighbours(rng, valid),
                                  grow_or_shrink(rng, valid, DIGITS), stray_character(rng, layout),
                                  valid[:3] + "." + valid[3:6] + "." + valid[6:]]))
    return values


def mac_layout(rng, octets):
    groups = ["%02x" % o for o in octets]
    if rng.random() < 0.2:
        groups = [g.lstrip("0") or "0" for g in groups]
    if rng.random() < 0.4:
        groups = [g.upper() for g in groups]
    seps = [":", "-", "\uff1a", "\u2013", " : ", "\u00a0:"]
    sep = rng.choice(seps)
    if rng.random() < 0.2:
        return surround(rng, "".join(g + rng.choice(seps) for g in groups[:-1]) + groups[-1])
    return surround(rng, sep.join(groups)) if rng.random() < 0.3 else sep.join(groups)


def mac_mistake(rng, octets):
    groups = ["%02x" % o for o in octets]
    choice = rng.randrange(8)
    if choice == 0:
        groups = groups[:5] if rng.random() < 0.5 else groups + ["ab"]
    elif choice == 1:
        groups[rng.randrange(6)] += rng.choice(HEX)
    elif choice == 2:
        i = rng.randrange(6)
        groups[i] = groups[i][0] + rng.choice("ghxyzG\uff41")
    elif choice == 3:
        return "".join(groups[:2]) + "." + "".join(groups[2:4]) + "." + "".join(groups[4:])
    elif choice == 4:
        return "".join(groups)
    elif choice == 5:
        groups[rng.randrange(6)] = ""
    elif choice == 6:
        return ".".join(groups)
    else:
        return stray_character(rng, ":".join(groups))
    return rng.choice([":", "-"]).join(groups)


def mac_corpus(rng):
    values = ["", ":::::", "D0-50-99-84-A2-A0", "0:1:2:3:4:5", " d0 : 50 : 99 : 84 : a2 : a0 "]
    for _ in range(12000):
        octets = [rng.randrange(256) for _ in range(6)]
        values.append(mac_layout(rng, octets))
        values.append(mac_mistake(rng, octets))
    return values


def ipv4_text(rng):
    return ".".join(str(rng.choice([rng.randrange(256), 0, 255])) for _ in range(4))


def ipv4_corpus(rng):
    values = ["", ".", "0.0.0.0", "01.2.3.4", "1.2.3.4/" + "0" * 4298 + "24",
              "1.2.3.4/" + "0" * 4299 + "24", "\u0661.2.3.4"]
    for _ in range(24000):
        address = ipv4_text(rng)
        mask = ipaddress.IPv4Network("0.0.0.0/%d" % rng.randrange(33))
        suffix = "" if rng.random() < 0.5 else rng.choice([
            "/%d" % rng.randrange(40), "/0%d" % rng.randrange(33), "/" + str(mask.netmask),
            "/" + str(mask.hostmask), "/" + ipv4_text(rng), "/"])
        values.append(address + suffix)
        values.append(rng.choice([
            change_one(rng, address, DIGITS + "."), swap_neighbours(rng, address),
            grow_or_shrink(rng, address, DIGITS + "."), stray_character(rng, address),
            address.replace(".", ".0", 1), address + "." + str(rng.randrange(300)),
            ".".join(str(rng.randrange(200, 400)) for _ in range(4)), surround(rng, address),
            address + "/" + str(rng.randrange(33)) + "/" + str(rng.randrange(33))]))
    return values


def ipv6_text(rng):
    hextets = [rng.choice([0, 0, rng.randrange(1 << 16), rng.randrange(16)]) for _ in range(8)]
    address = ipaddress.IPv6Address(b"".join(h.to_bytes(2, "big") for h in hextets))
    text = rng.choice([address.compressed, address.exploded, address.compressed.upper(),
                       ":".join("%x" % h for h in hextets)])
    if rng.random() < 0.15:
        head = rng.choice([":".join("%x" % h for h in hextets[:6]) + ":", "::ffff:", "::", "64:ff9b::"])
        text = head + ipv4_text(rng)
    if rng.random() < 0.1:
        text += "%" + rng.choice(["eth0", "1", "en0:1", "\u00e9", "a.b"])
    return text


def ipv6_corpus(rng):
    values = ["", ":", "::", ":::", "1::2::3", "::ffff:1.2.3.4", "fe80::1%", "fe80::1%a%b", "::%1:2",
              "::1/" + "0" * 4298 + "64", "::1/" + "0" * 4299 + "64"]
    for _ in range(24000):
        address = ipv6_text(rng)
        prefix = rng.choice(["/%d" % rng.randrange(140), "/0%d" % rng.randrange(129), "/"])
        values.append(address + ("" if rng.random() < 0.6 else prefix))
        values.append(rng.choice([
            change_one(rng, address, HEX + ":"), swap_neighbours(rng, address),
            grow_or_shrink(rng, address, HEX + ":"), stray_character(rng, address),
            address.replace("::", ":", 1), address + "::1", address + ":" + rng.choice(HEX) * 5,
            "::" + address, address.replace(":", ":::", 1), surround(rng, address),
            address + "/%d/1" % rng.randrange(129), address + "%", address + "%%eth0"]))
    return values


CORPORA = {"luhn": luhn_corpus, "iban": iban_corpus, "ssn": ssn_corpus, "itin": itin_corpus,
           "aba": aba_corpus, "nhs": nhs_corpus, "mac": mac_corpus}
IP_CORPORA = {"ipv4": ipv4_corpus, "ipv4_interface": ipv4_corpus, "ipv6": ipv6_corpus,
              "ipv6_interface": ipv6_corpus}


class ValidatorParityTest(unittest.TestCase):
    def compare(self, corpora, oracles):
        requests, expected = [], []
        for name, corpus in corpora.items():
            values = corpus(random.Random("%d %s" % (SEED, name)))
            requests += [(name, v) for v in values]
            expected += [oracles[name](v) for v in values]
        answers = probe(requests)
        counts, mismatches = {}, []
        for (name, value), oracle, answer in zip(requests, expected, answers):
            counts.setdefault(name, [0, 0])[0 if oracle else 1] += 1
            if answer != ("1" if oracle else "0"):
                mismatches.append("%s(%r): oracle %s, lib/pii %s" % (name, value, oracle, answer))
        print("\n%-16s %8s %8s" % ("validator", "valid", "invalid"))
        for name, (valid, invalid) in counts.items():
            print("%-16s %8d %8d" % (name, valid, invalid))
        if mismatches:
            self.fail("%d disagreements, the first:\n%s" % (len(mismatches), "\n".join(mismatches[:20])))
        for name, (valid, invalid) in counts.items():
            self.assertGreaterEqual(min(valid, invalid), MIN_EACH, name)

    def test_validators_give_stdnum_verdicts(self):
        if STDNUM_MISSING:
            self.skipTest(STDNUM_MISSING)
        self.compare(CORPORA, ORACLES)

    def test_ip_addresses_read_as_python_ipaddress_reads_them(self):
        self.compare(IP_CORPORA, IP_ORACLES)

    def test_check_digits_are_stdnum_calculations(self):
        if STDNUM_MISSING:
            self.skipTest(STDNUM_MISSING)
        rng = random.Random(SEED)
        prefixes = ["".join(rng.choice(DIGITS) for _ in range(rng.randint(0, 30))) for _ in range(5000)]
        bbans = [(c, random_bban(rng, s)) for c, s in iban_registry() for _ in range(20)]
        answers = probe([("luhn_check", p) for p in prefixes] + [("iban_check", c + b) for c, b in bbans])
        expected = [luhn.calc_check_digit(p) for p in prefixes]
        expected += [iban.calc_check_digits(c + "00" + b) for c, b in bbans]
        self.assertEqual(answers, expected)

    def test_iban_registry_is_stdnums(self):
        if STDNUM_MISSING:
            self.skipTest(STDNUM_MISSING)
        proc = subprocess.run([binary("pii_validate_probe"), "--iban-registry"], capture_output=True,
                              text=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        ours = [tuple(line.split(" ")) for line in proc.stdout.splitlines()]
        self.assertEqual(ours, iban_registry())
        self.assertEqual(len(ours), 82)


class CharacterTablesTest(unittest.TestCase):
    """Every code point through stdnum's clean map, Python's strip, the uppercase
    letters that become ASCII and int()'s decimal digits."""

    CODE_POINTS = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    CHUNK = 512

    def chunks(self):
        points = self.CODE_POINTS
        return ["".join(points[i:i + self.CHUNK]) for i in range(0, len(points), self.CHUNK)]

    def test_clean_map_is_stdnums(self):
        if STDNUM_MISSING:
            self.skipTest(STDNUM_MISSING)
        chunks = self.chunks()
        answers = probe([("clean", c) for c in chunks])
        self.assertEqual(answers, [clean(c).encode("utf-8").hex() for c in chunks])
        self.assertEqual(len(_char_map), 195)

    def test_strip_is_pythons(self):
        values = [c + "x" + c for c in self.CODE_POINTS]
        answers = probe([("strip", v) for v in values])
        wrong = [hex(ord(v[0])) for v, a in zip(values, answers) if a != v.strip().encode("utf-8").hex()]
        self.assertEqual(wrong, [])

    def test_ascii_uppercase_and_decimal_digits_are_pythons(self):
        chunks = self.chunks()
        answers = probe([("upper", c) for c in chunks] + [("decimal", c) for c in chunks])
        upper = ["".join(u if (u := c.upper()).isascii() else c for c in chunk).encode("utf-8").hex()
                 for chunk in chunks]
        self.assertEqual(answers[:len(chunks)], upper)

        def decimal(c):
            try:
                return str(int(c))
            except ValueError:
                return "-1"
        self.assertEqual(answers[len(chunks):], [",".join(decimal(c) for c in chunk) for chunk in chunks])


if __name__ == "__main__":
    unittest.main()
