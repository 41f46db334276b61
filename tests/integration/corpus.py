"""Fifty topics written as real sentences, and paraphrased questions about some of them."""

TOPICS: list[tuple[str, str]] = [
    (
        "Party planning",
        "Planning Mel's surprise birthday party at the lake house with thirty guests.",
    ),
    (
        "Billing migration",
        "Migrating the billing tables from MySQL to Postgres, one table per night.",
    ),
    (
        "Kitchen renovation",
        "Renovating the kitchen: new oak cabinets, quartz counters and a gas stove.",
    ),
    (
        "Marathon training",
        "Training for the Berlin marathon with four runs a week and a long run on Sundays.",
    ),
    (
        "Tax return",
        "Filing this year's tax return before the April deadline, with receipts for home office costs.",
    ),
    ("Dog adoption", "Adopting a rescue beagle named Biscuit from the shelter on Elm Street."),
    ("Japan trip", "Two-week trip to Japan in spring: Tokyo, Kyoto and hiking near Mount Fuji."),
    (
        "Sourdough baking",
        "Baking sourdough bread at home; the starter needs feeding every twelve hours.",
    ),
    (
        "Car repair",
        "The car's brakes squeal; the garage quoted 400 dollars for new pads and rotors.",
    ),
    ("Guitar lessons", "Learning classical guitar with a teacher every Thursday evening."),
    (
        "Sleep schedule",
        "Trying to fix a bad sleep schedule by going to bed at eleven without screens.",
    ),
    (
        "Garden vegetables",
        "Growing tomatoes, zucchini and basil in raised beds in the back garden.",
    ),
    (
        "Job interview",
        "Preparing for a senior engineer interview at a fintech company next Tuesday.",
    ),
    ("Wedding speech", "Writing the best man speech for Tom's wedding in June."),
    ("Home network", "The home Wi-Fi drops every evening; considering a mesh router system."),
    ("Book club", "Monthly book club reading The Overstory; meeting at Anna's flat."),
    ("Vaccination appointment", "Booking flu shots for the whole family at the pharmacy."),
    ("Solar panels", "Getting quotes for rooftop solar panels and a home battery."),
    (
        "Chess improvement",
        "Improving at chess by studying endgames and playing rapid games online.",
    ),
    ("Moving apartments", "Moving to a bigger apartment across town at the end of the month."),
    ("Retirement savings", "Increasing retirement contributions to fifteen percent of salary."),
    ("Photography hobby", "Learning street photography with a used Fujifilm camera."),
    (
        "Knee injury",
        "Physiotherapy for a twisted knee from playing football; no running for six weeks.",
    ),
    (
        "Spanish learning",
        "Practising Spanish every day with an app and weekly conversation classes.",
    ),
    (
        "Podcast launch",
        "Launching a podcast about urban gardening, recording the first three episodes.",
    ),
    (
        "Kid's school choice",
        "Choosing a primary school for our daughter between two nearby options.",
    ),
    ("Climbing gym", "Bouldering twice a week at the new climbing gym downtown."),
    (
        "Insurance claim",
        "Filing an insurance claim for water damage after the pipe burst in the bathroom.",
    ),
    ("Volunteer shelter", "Volunteering at the food bank on Saturday mornings."),
    (
        "Website redesign",
        "Redesigning the bakery's website with online ordering and a new menu page.",
    ),
    ("Bike commute", "Commuting to work by bike; need lights and a rain jacket for winter."),
    ("Painting class", "Taking a watercolour painting class at the community centre."),
    ("Mortgage refinancing", "Refinancing the mortgage to a lower fixed interest rate."),
    ("Piano recital", "Our son's piano recital is next month; he is practising Chopin."),
    ("Camping weekend", "Planning a camping weekend by the lake with tents and a canoe."),
    ("Meal prep", "Cooking meals for the week on Sundays to eat healthier."),
    ("Laptop purchase", "Choosing a new laptop for programming with at least 32 GB of memory."),
    ("Grandma's health", "Grandma is recovering from hip surgery and needs help with groceries."),
    ("Charity run", "Organising a 5k charity run for the children's hospital."),
    ("Board game night", "Hosting a board game night with Catan and Ticket to Ride."),
    ("Coffee roasting", "Roasting coffee beans at home with a small drum roaster."),
    ("Neighbour dispute", "A dispute with the neighbour about the fence and the overhanging tree."),
    ("Conference talk", "Giving a conference talk about graph databases in Lisbon."),
    ("Electric car", "Deciding whether to buy an electric car and install a home charger."),
    ("Aquarium setup", "Setting up a freshwater aquarium with neon tetras and live plants."),
    ("Family reunion", "Organising a family reunion at the farm in August."),
    ("Yoga practice", "Doing yoga every morning for back pain."),
    (
        "Budget spreadsheet",
        "Tracking monthly spending in a budget spreadsheet to save for a house.",
    ),
    ("Birdwatching", "Birdwatching at the wetlands; spotted a heron and kingfishers."),
    ("Roof leak", "The roof leaks during heavy rain; a roofer comes on Friday."),
]

# (question in other words, the topic it is about)
PARAPHRASES: list[tuple[str, str]] = [
    ("how is the celebration for Mel coming along?", "Party planning"),
    ("moving our invoices database to a different SQL engine", "Billing migration"),
    ("cupboards and worktops for the cooking area", "Kitchen renovation"),
    ("getting ready for a long-distance running race", "Marathon training"),
    ("the puppy we got from the animal rescue", "Dog adoption"),
    ("what should I bring to the tent trip by the water?", "Camping weekend"),
    ("my kneecap hurts after the soccer match", "Knee injury"),
    ("the ceiling drips when it storms", "Roof leak"),
    ("a new notebook computer for coding", "Laptop purchase"),
    ("speaking practice for a foreign language", "Spanish learning"),
]
