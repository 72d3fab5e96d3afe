"""A generated customer table with personal data in real formats, for the PII
tests: names, street addresses, e-mail addresses, NANP phone numbers, SSNs, Luhn-valid card
numbers and mod-97 IBANs in columns of their own, and e-mail addresses and
phone numbers inside a free-text note. Every person appears in two rows, so a
consistent transform must give both the same surrogate."""
import csv
import random

FIRST = ["James", "Mary", "John", "Patricia", "Robert", "Jennifer", "Michael", "Linda", "David",
         "Susan", "Richard", "Karen", "Thomas", "Nancy", "Daniel", "Lisa"]
LAST = ["Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis", "Wilson",
        "Moore", "Taylor", "Anderson", "Thomas", "Jackson", "White", "Harris"]
PLANS = ["basic", "plus", "premium"]
SUFFIXES = ["Street", "Avenue", "Road", "Lane", "Drive"]
HEADER = ["customer", "street", "email", "phone", "ssn", "card", "iban", "plan", "age", "note"]
# The columns whose values the model must never see under --pii replace.
SECRET_COLUMNS = {"email": "email", "phone": "phone_number", "ssn": "ssn",
                  "card": "credit_debit_card", "iban": "iban"}


def luhn_complete(digits):
    """`digits` with the check digit that makes it Luhn-valid."""
    total = 0
    for i, d in enumerate(reversed(digits + "0")):
        d = int(d)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return digits + str((10 - total % 10) % 10)


def luhn_valid(number):
    return luhn_complete(number[:-1]) == number


def iban_check_digits(country, bban):
    numeric = "".join(str(int(c, 36)) for c in bban + country + "00")
    return "%02d" % (98 - int(numeric) % 97)


def iban_valid(iban):
    compact = iban.replace(" ", "")
    numeric = "".join(str(int(c, 36)) for c in compact[4:] + compact[:4])
    return int(numeric) % 97 == 1


def nanp_part(rng, second_max):
    """An area code or exchange: 2-9 first, never N11 (service codes)."""
    while True:
        part = "%d%d%d" % (rng.randint(2, 9), rng.randint(0, second_max), rng.randint(0, 9))
        if part[1:] != "11":
            return part


def person(rng, index):
    first, last = rng.choice(FIRST), rng.choice(LAST)
    bban = "%08d%010d" % (rng.randrange(10 ** 7, 10 ** 8), rng.randrange(10 ** 10))
    return {
        "customer": "%s %s" % (first, last),
        "street": "%d %s %s" % (rng.randint(1, 9999), rng.choice(LAST), rng.choice(SUFFIXES)),
        "email": "%s.%s%d@%s" % (first.lower(), last.lower(), index,
                                 rng.choice(["corp.com", "mail.org", "shop.net"])),
        "phone": "(%s) %s-%04d" % (nanp_part(rng, 8), nanp_part(rng, 9), rng.randrange(10000)),
        "ssn": "%03d-%02d-%04d" % (rng.randint(101, 599), rng.randint(1, 99), rng.randint(1, 9999)),
        "card": luhn_complete("4" + "".join(str(rng.randint(0, 9)) for _ in range(14))),
        "iban": "DE" + iban_check_digits("DE", bban) + bban,
        "contact": "%s-%s-%04d" % (nanp_part(rng, 8), nanp_part(rng, 9), rng.randrange(10000)),
    }


def people_rows(persons, seed=7):
    """Rows of `persons` people, two rows each (same personal data, other plan,
    age and note wording), in a shuffled order."""
    rng = random.Random(seed)
    rows = []
    for i in range(persons):
        p = person(rng, i)
        for visit in range(2):
            note = ("call %s or write to %s" if visit == 0 else "reach me at %s (mail %s)") % (
                p["contact"], p["email"])
            rows.append([p["customer"], p["street"], p["email"], p["phone"], p["ssn"], p["card"], p["iban"],
                         rng.choice(PLANS), str(rng.randint(18, 90)), note])
    rng.shuffle(rows)
    return rows


def write_people(path, persons, seed=7, columns=HEADER):
    """Writes the table (only `columns`, in that order) to `path` and returns
    its rows (all columns, HEADER's order)."""
    rows = people_rows(persons, seed)
    with open(path, "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([[row[HEADER.index(c)] for c in columns] for row in rows])
    return rows


def read_rows(path):
    with open(path, newline="") as f:
        table = list(csv.reader(f))
    return table[0], table[1:]


def secret_values(rows):
    """Every personal value of `rows`: the secret columns' cells and the
    contact numbers inside the notes."""
    values = set()
    for row in rows:
        for column in SECRET_COLUMNS:
            values.add(row[HEADER.index(column)])
        note = row[HEADER.index("note")]
        values.add(note.split(" ")[3 if note.startswith("reach") else 1])
    return values
