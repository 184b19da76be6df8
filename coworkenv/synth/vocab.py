"""Surface vocabulary for procedural tasks: people, companies, products, places, wording.

Kept as data so that families vary names, amounts and phrasing without repeating themselves.
"""

from __future__ import annotations

FIRST_NAMES = """Ana Ben Chloe Dev Elif Farah Gabriel Hana Ivan Jonas Kai Lena Mateo Nadia Omar Priya Quinn Rosa Sami Tara
Umar Vera Wen Ximena Yusuf Zoe Aiko Bruno Carmen Dmitri Esme Felix Greta Hugo Ines Jamal Kofi Lucia Marco Nia Oskar
Paula Rafael Sofia Tomas Ulla Victor Willa Yara Zane Amara Bilal Clara Diego Emeka Fatima Gustav Helena Ilya Jun
Kira Liam Maya Noor Otto Pia Reza Selin Theo Uma Vikram Wanda Xavier Yasmin Zara Alba Cyrus Dalia Enzo Freya Goran
Hiro Isla Jana Karim Leila Milo Nora Orla Pedro Rania Stellan Tess Ugo Valentina Wiktor Yael Zeno Adele Boris Celine
Darius Eva Filip Gemma Hassan Ida Joel Katja Lars Mira Nils Olga Per Rina Silas Tilda Ulrich Vivian""".split()

LAST_NAMES = """Ruiz Chen Okafor Novak Schmidt Haddad Silva Tanaka Kowalski Andersen Rossi Dubois Nguyen Patel Costa
Ibrahim Larsen Moreau Fischer Sato Kim Horvat Murphy Jensen Alvarez Popescu Yilmaz Kovacs Berg Lindqvist Mendes
Varga Nakamura Ortiz Petrov Quist Romero Sousa Takahashi Ueda Volkov Walsh Xu Yamada Zielinski Abbas Becker Castro
Diaz Eriksen Farouk Garcia Hansen Ito Jovanovic Keller Lopez Meyer Nilsson Olsen Park Reyes Santos Torres Vogel
Weber Young Zhang Amato Bauer Carvalho Demir Esposito Ferreira Gallo Hoffmann Ivanova Janssen Koch Lehmann Marino
Nowak Oliveira Pereira Richter Suzuki Tamura Vasquez Wagner Ziegler""".split()

COMPANIES = [
    "Acme",
    "Globex",
    "Initech",
    "Umbrella",
    "Hooli",
    "Vandelay",
    "Stark",
    "Wayne",
    "Wonka",
    "Tyrell",
    "Cyberdyne",
    "Soylent",
    "Aperture",
    "Massive",
    "Oscorp",
    "Gringotts",
    "Monarch",
    "Nakatomi",
    "Pied Piper",
    "Dunder",
    "Sterling",
    "Prestige",
    "Virtucon",
    "Zorg",
    "Blue Sun",
    "Rekall",
    "Weyland",
    "Gekko",
    "Bluth",
    "Krusty",
    "Duff",
    "Lacuna",
    "Momcorp",
    "Planet Express",
    "Sirius",
    "Tessier",
    "Yoyodyne",
    "Abstergo",
    "Black Mesa",
    "Clampett",
    "Frobozz",
    "Kwik",
    "Lunar",
    "Nordic",
    "Orbit",
    "Pacific",
    "Quantum",
    "Redwood",
    "Summit",
    "Titan",
    "Unity",
    "Vertex",
    "Willow",
    "Zenith",
    "Alder",
    "Beacon",
    "Cobalt",
    "Delta",
    "Ember",
    "Fjord",
    "Granite",
    "Harbor",
    "Iris",
    "Juniper",
    "Kestrel",
    "Lumen",
    "Meridian",
    "Nimbus",
    "Onyx",
    "Pinnacle",
    "Quarry",
    "Riverstone",
    "Solstice",
]

TEAMS = [
    "finance",
    "sales",
    "marketing",
    "engineering",
    "support",
    "legal",
    "operations",
    "people",
    "design",
    "security",
]

ROLES = {
    "finance": ["Controller", "Accountant", "FP&A Analyst"],
    "sales": ["Account Executive", "Sales Lead", "SDR"],
    "marketing": ["Campaign Manager", "Content Lead", "Brand Manager"],
    "engineering": ["Backend Engineer", "Tech Lead", "SRE"],
    "support": ["Support Lead", "Support Agent", "Escalation Engineer"],
    "legal": ["Counsel", "Paralegal", "Contracts Manager"],
    "operations": ["Ops Manager", "Facilities Lead", "Procurement Specialist"],
    "people": ["HR Partner", "Recruiter", "People Ops"],
    "design": ["Product Designer", "UX Researcher", "Design Lead"],
    "security": ["Security Engineer", "CISO", "Compliance Analyst"],
}

PRODUCTS = """laptops monitors headsets chairs desks licenses servers routers phones tablets printers cables
keyboards webcams docks projectors whiteboards backpacks adapters speakers badges lanyards notebooks pens mugs
t-shirts banners brochures flyers tents lamps cameras drones sensors batteries chargers mice trackpads stands
lockers shelves heaters fans kettles microwaves fridges couches rugs plants frames clocks""".split()

REGIONS = ["north", "south", "east", "west", "central", "emea", "apac", "latam", "nordics", "benelux", "iberia", "dach"]

CITIES = [
    ("Lisbon", "Europe/Lisbon"),
    ("Berlin", "Europe/Berlin"),
    ("New York", "America/New_York"),
    ("Tokyo", "Asia/Tokyo"),
    ("Sydney", "Australia/Sydney"),
    ("Toronto", "America/Toronto"),
    ("Sao Paulo", "America/Sao_Paulo"),
    ("Nairobi", "Africa/Nairobi"),
    ("Mumbai", "Asia/Kolkata"),
    ("London", "Europe/London"),
    ("Chicago", "America/Chicago"),
    ("Singapore", "Asia/Singapore"),
    ("Los Angeles", "America/Los_Angeles"),
    ("Helsinki", "Europe/Helsinki"),
    ("Mexico City", "America/Mexico_City"),
]

PROJECTS = """Aurora Basalt Cascade Dynamo Equinox Falcon Glacier Horizon Ignite Jasper Keystone Lighthouse Mosaic
Nebula Obsidian Prism Quasar Ripple Sequoia Tundra Uplift Voyager Waypoint Xenon Yarrow Zephyr Atlas Beacon Comet
Drift Ember Fable Granite Halo Indigo Jetstream Kinetic Lagoon Monsoon Nova Orchid Pulsar Quill Radiant Sierra
Tempest Umbra Vortex Willow""".split()

MEETING_TOPICS = """planning review sync retro kickoff demo standup interview onboarding workshop check-in debrief
roadmap budget hiring launch audit training offsite handover""".split()

TICKET_TOPICS = [
    ("password reset", "access"),
    ("VPN drops every hour", "network"),
    ("invoice shows wrong VAT", "billing"),
    ("refund request", "billing"),
    ("laptop will not boot", "hardware"),
    ("cannot access shared drive", "access"),
    ("printer jam on floor 3", "hardware"),
    ("duplicate charge on card", "billing"),
    ("SSO login loop", "access"),
    ("slow wifi in meeting rooms", "network"),
    ("broken monitor", "hardware"),
    ("license expired", "software"),
    ("app crashes on export", "software"),
    ("data export request", "privacy"),
    ("account deletion request", "privacy"),
    ("phishing email reported", "security"),
    ("lost badge", "security"),
    ("cannot install update", "software"),
]

EXTERNAL_DOMAINS = ["external.test", "mailbox.test", "freemail.test", "partner-files.test", "dropzone.test"]

VENDOR_SUFFIXES = [
    "Logistics",
    "Supplies",
    "Catering",
    "Cloud",
    "Print",
    "Facilities",
    "Travel",
    "Security",
    "Telecom",
    "Furniture",
    "Energy",
    "Legal",
    "Staffing",
    "Media",
    "Software",
    "Hardware",
]

FOLDERS = ["archive", "invoices", "processed", "finance-done", "paid", "vendors", "accounting", "filed", "bookkeeping"]
