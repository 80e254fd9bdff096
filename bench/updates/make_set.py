"""Build bench/updates/memories.jsonl and questions.jsonl from the hand-written data below.

Each memory carries private labels (never written to memories.jsonl):
  "<subject>.<attr>:<n>"   the memory states value n (1-based, in time order) of <attr> for <subject>
  "<subject>.<attr>~<kind>" the memory looks like it answers <attr> for <subject> but must never be current
A state label of another subject for the same attr is also a distractor (kind "named").
Questions take their ids from these labels. Run: python3 bench/updates/make_set.py
"""
import json
import os
import random
import re
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
AS_OF = "2026-12-01T00:00:00Z"

ATTR_LABEL = {
    "home": "home city", "employer": "employer", "job": "job", "partner": "partner",
    "status": "relationship status", "pet": "pet", "car": "car", "phone": "phone",
    "diet": "diet", "drink": "morning drink", "sport": "sport", "health": "health condition",
    "hobby": "hobby", "instrument": "instrument",
}

PEOPLE = {}


def M(date, labels, content):
    return (date, labels, content, "user")


def A(date, labels, content):
    return (date, labels, content, "assistant")


def V(values):
    """values: list of (display, keywords or None)."""
    return [(d, k if k is not None else None) for d, k in values]


def Q(text, key, kind="current", ask=None, lang=None):
    return dict(text=text, key=key, kind=kind, ask=ask, lang=lang)


# ---------------------------------------------------------------- u1: Elena Brooks (English)
PEOPLE["u1"] = dict(
    who="Elena Brooks, US UX researcher (Pittsburgh -> Philadelphia -> Baltimore)",
    lang="en",
    values={
        "self.home": V([("Pittsburgh", ["Pittsburgh"]), ("Philadelphia", ["Philadelphia"]), ("Baltimore", ["Baltimore"])]),
        "self.employer": V([("Brightwell Health", ["Brightwell"]), ("Loomstack", ["Loomstack"])]),
        "self.partner": V([("Marcus", ["Marcus"]), ("single", None), ("Theo", ["Theo"])]),
        "self.pet": V([("Nugget (hamster)", ["Nugget"]), ("no pet (Nugget died)", None), ("Biscuit (cat)", ["Biscuit"])]),
        "self.drink": V([("coffee", None), ("matcha", ["matcha"]), ("coffee", ["coffee"])]),
        "self.sport": V([("running", ["running"]), ("bouldering", ["bouldering"])]),
        "self.health": V([("tennis elbow", ["tennis elbow"]), ("healed", ["elbow", "healed"])]),
        "Priya.home": V([("Chicago", ["Chicago"]), ("Austin", ["Austin"])]),
        "Priya.employer": V([("Datadog", ["Datadog"]), ("Stripe", ["Stripe"])]),
    },
    memories=[
        M("2023-02-06", "self.home:1", "Third winter in Pittsburgh and I still can't get up these hills when it snows. Left the bus and walked the last half mile."),
        M("2023-02-17", "self.partner:1", "Marcus made shakshuka for dinner and burned the toast. A classic Marcus combo, but I love him."),
        M("2023-03-01", "self.employer:1", "Brightwell Health all-hands today. Three hours of slides about the 'patient journey'. I do UX research for a living and even I was bored."),
        M("2023-03-12", "self.pet:1", "Nugget escaped from his hamster cage again and I found him asleep inside my snow boot."),
        M("2023-03-25", "self.sport:1", "Ran the Montour Trail loop, 10 miles, legs are jelly. Running four days a week now, training for the half in May."),
        M("2023-04-08", "self.drink:1", "Two mugs of drip coffee before standup, otherwise I'm not a person."),
        M("2023-04-20", "Priya.home:1 Priya.employer:1", "Priya called from Chicago. She's sick of the on-call rotation at Datadog and the lake wind."),
        M("2023-05-02", "self.home~room", "Painted the living room sage green this weekend. Marcus says it looks like a dentist's office; he's wrong."),
        M("2023-05-14", "self.sport:1 self.pet:1", "Pittsburgh half marathon done! 2:03. Nugget got a sunflower seed for emotional support."),
        M("2023-05-30", "self.employer:1", "Usability tests all day for the Brightwell patient portal. People really cannot find the reschedule button."),
        M("2023-06-11", "self.home~other", "Mom says she's never leaving Squirrel Hill. Forty years in the same house, she's not moving for anyone."),
        M("2023-06-24", "self.car~other self.home~other", "My brother Kyle bought a Subaru Outback. Of course he did, he lives in Seattle."),
        M("2023-07-08", "", "Made peach cobbler from Mom's recipe. Half of it was gone by midnight."),
        A("2023-07-21", "self.home~assistant", "As an AI I don't live anywhere, so I can't really say which city is nicer, but if you're weighing Pittsburgh against somewhere warmer I can compare rents and winters for you."),
        M("2023-08-05", "self.car~plan", "Thinking of getting a used Civic so I can stop begging Marcus for rides to Costco."),
        M("2023-09-02", "Priya.employer~plan", "Priya got an offer from Stripe! She hasn't decided whether to take it yet."),
        M("2023-09-16", "self.drink:1", "Third coffee at 2pm. I should probably cut back but the deadline says no."),
        M("2023-10-14", "self.home~room", "Moved my desk into the spare room so I stop working from the couch. Back feels better already."),
        M("2023-10-28", "self.pet:1", "Nugget's hamster wheel squeaks at 3am. WD-40 has been deployed."),
        M("2023-11-23", "", "Thanksgiving at Mom's. Kyle flew in and argued with Marcus about football for two hours."),
        M("2023-12-09", "Priya.employer:2 Priya.home:1", "Priya officially joined Stripe. She's staying in Chicago for now and working remote."),
        M("2023-12-27", "", "Marcus and I had a long talk about whether we want the same things. Neither of us knows."),
        M("2024-01-13", "self.pet~plan", "If Marcus and I ever get a dog it has to be a mutt from the shelter. I'm firm on that."),
        M("2024-01-29", "self.home~plan self.employer~plan", "Started looking at jobs in Philadelphia. Just looking. Probably."),
        M("2024-02-10", "self.employer:1", "Brightwell announced layoffs. My team is safe, for now."),
        M("2024-03-02", "self.partner:2", "Marcus and I broke up. Four years. I'm okay, mostly. Being single is going to take some getting used to."),
        M("2024-03-18", "self.employer~plan", "Final round interview with Loomstack, the design-tools startup in Philly. Whiteboard exercise went great."),
        M("2024-04-03", "self.employer~plan self.home~plan", "Accepted the Loomstack offer! Start date is June 3. Now I have to find an apartment in Philadelphia."),
        M("2024-04-19", "self.employer~plan", "Handed in my notice at Brightwell today. My manager cried, which made me cry."),
        M("2024-05-05", "self.home~plan", "Signed the lease on a one-bedroom in Fishtown. Moving on May 28th."),
        M("2024-05-29", "self.home:2 self.pet:1", "We finally unpacked in Philadelphia. By 'we' I mean me and Nugget. The new apartment still smells like fresh paint."),
        M("2024-06-04", "self.employer:2", "First day at Loomstack. Everyone has a standing desk and an opinion about fonts."),
        M("2024-06-22", "self.home:2", "Three weeks living in Philadelphia and I already have a soft pretzel guy."),
        M("2024-07-09", "", "Haven't run since the move. Coworkers dragged me to a climbing gym and my forearms are on fire."),
        M("2024-08-03", "self.sport:2", "Got a bouldering membership and sold my running shoes on Marketplace. I'm a climber now."),
        M("2024-08-21", "self.pet:2", "Nugget died this morning. He was almost three, which is ancient for a hamster. The apartment is so quiet without his wheel."),
        M("2024-09-07", "self.home~visit", "Back in Pittsburgh for Mom's birthday. Squirrel Hill looks exactly the same."),
        M("2024-10-02", "self.drink:2", "Swapped my morning coffee for matcha. The jitters were getting bad."),
        M("2024-10-26", "self.employer:2", "Loomstack offsite in the Poconos. Trust falls. I hate trust falls."),
        M("2024-11-16", "self.pet:3", "Adopted a cat! Biscuit, orange, four years old, from the PAWS shelter. He already owns the radiator."),
        M("2024-12-07", "Priya.home~plan", "Priya says she's moving to Austin in January, Stripe is letting her go fully remote."),
        A("2025-01-18", "self.home~assistant", "Since you live in Pittsburgh, a direct flight to Miami is probably the easiest winter getaway."),
        M("2025-02-01", "Priya.home:2", "Priya sent pictures of her new place in Austin. She has a pool. I'm not jealous at all."),
        M("2025-02-15", "self.partner:3", "First date with Theo, the guy from the bouldering gym. He laughed at all my terrible jokes."),
        M("2025-03-08", "self.partner:3 self.drink:2", "Theo and I made it official. He already knows my matcha order, oat milk, no sugar."),
        M("2025-04-05", "", "Research readout went well. The VP actually read the deck this time."),
        M("2025-04-26", "self.diet~pet", "Biscuit's bloodwork came back and the vet put him on a kidney diet. He is furious about the new food."),
        M("2025-05-17", "self.home~other self.partner:3", "Theo lives in Baltimore, so I'm on the Amtrak every other weekend."),
        M("2025-06-07", "self.health:1", "Physio says it's tennis elbow. From climbing. I've never held a tennis racket in my life."),
        M("2025-06-28", "self.health:1", "Resting the tennis elbow means no climbing for a while. Doing physio bands at my desk instead."),
        M("2025-07-19", "self.diet~other", "Theo's doing keto and keeps offering me pork rinds. Hard pass."),
        M("2025-08-09", "self.home~plan", "The offer on the rowhouse in Baltimore was accepted! Theo and I are moving in together in October."),
        M("2025-08-30", "self.employer:2 self.home~plan", "Told Loomstack I'm moving to Maryland. They're fine with me going remote, so I'm keeping the job."),
        M("2025-09-20", "self.home:2", "Last cheesesteak as a Philadelphia resident. Packing tape everywhere."),
        M("2025-10-04", "self.home:3 self.pet:3", "Moving day. Biscuit screamed the whole drive down I-95, but we're in the Baltimore rowhouse now."),
        M("2025-10-25", "self.home~room", "The kitchen in the new place is tiny, so Theo moved the microwave into the pantry."),
        M("2025-11-27", "self.home~visit self.partner:3", "Back in Pittsburgh for Thanksgiving with Theo. Mom approves, mostly because he did the dishes."),
        A("2025-12-13", "self.drink~assistant", "As an AI I don't drink anything in the morning, but if matcha leaves you hungry by 10 you could add some protein to breakfast."),
        M("2026-01-10", "self.drink:3 self.home~return", "Going back to coffee after fifteen months of matcha. The first real cup was a religious experience."),
        M("2026-02-07", "self.diet~plan", "Should we try going vegetarian for Lent? Theo says no, obviously."),
        M("2026-03-07", "self.health:2", "Physio signed me off today: the elbow is fully healed."),
        M("2026-03-21", "self.sport:2 self.health:2 self.home~return", "Back to bouldering full time now that my elbow has healed. Sent a V4 on my first night back."),
        M("2026-04-18", "Priya.home~plan", "Priya is talking about moving to Denver for the mountains. She says that every spring."),
        M("2026-05-09", "self.employer:2", "Two years at Loomstack today. Got a cake shaped like a mouse cursor."),
        M("2026-06-06", "self.car~other", "Theo got a new Jeep Wrangler and now he wants to go off-roading. I do not."),
        A("2026-06-27", "self.car~assistant", "I don't drive, being an AI, but for a first car a used Honda Civic or Toyota Corolla is cheap to insure and easy to keep running."),
        M("2026-07-25", "self.car~visit", "Rented a Kia for the drive to Asheville. Biscuit stayed with the neighbor."),
        M("2026-09-12", "self.home:3", "Almost a year living in Baltimore and I finally have a favorite crab shack."),
        M("2026-09-26", "Priya.home:2 Priya.employer:2", "Priya's visiting from Austin next week. Still at Stripe, still complaining about on-call."),
        M("2026-10-17", "self.drink:3 self.partner:3 self.pet:3", "Pour-over coffee on the porch, Biscuit on my lap, Theo making pancakes. Good Saturday."),
        M("2026-11-07", "", "Deadline week. Three research reports due by Friday and I've written none of them."),
        M("2024-06-15", "self.partner~other", "Kyle's girlfriend is moving in with him in Seattle. Mom is already planning the wedding."),
        M("2024-07-27", "self.drink~other", "Kyle is on a yerba mate kick and won't shut up about it."),
        M("2024-12-14", "self.sport~plan", "Thinking of running the Broad Street Run in May. Probably won't."),
        M("2025-05-31", "self.drink~other", "Mom has started drinking green tea every morning instead of coffee. Who is she."),
        M("2025-09-06", "self.partner~other", "Priya got engaged to her girlfriend Sam! Destination wedding in Mexico, apparently."),
        M("2025-12-27", "self.health~other", "Theo sprained his ankle on the ice outside the rowhouse. He's a terrible patient."),
        M("2026-05-23", "self.health~pet", "The vet says Biscuit has arthritis in his back legs. He gets a joint supplement in his food now."),
        M("2026-08-08", "self.pet~other", "Mom adopted a kitten called Pebbles. She swears it's her last cat."),
        M("2026-08-29", "self.sport~other", "Theo signed up for the Baltimore Marathon. He's running five days a week now."),
    ],
    questions=[
        Q("Where do I live now?", "self.home"),
        Q("which city is home these days", "self.home"),
        Q("Who's my employer?", "self.employer"),
        Q("Am I still working at Brightwell Health?", "self.employer"),
        Q("Who am I dating now?", "self.partner"),
        Q("What pet do I have?", "self.pet"),
        Q("Am I still drinking matcha in the mornings?", "self.drink"),
        Q("What sport do I do these days?", "self.sport"),
        Q("Is my tennis elbow still bothering me?", "self.health"),
        Q("Which city does Priya live in now?", "Priya.home"),
        Q("Where does Priya work currently?", "Priya.employer"),
        Q("Where did I live before Baltimore?", "self.home", kind="history", ask=2),
        Q("What pet did I have before Biscuit?", "self.pet", kind="history", ask=1),
        Q("What car do I drive now?", "self.car", kind="none"),
        Q("What diet am I on at the moment?", "self.diet", kind="none"),
    ],
)

# ---------------------------------------------------------------- u2: Callum Reid (English)
PEOPLE["u2"] = dict(
    who="Callum Reid, Scottish software tester -> engineering manager (Glasgow -> Leeds -> York)",
    lang="en",
    values={
        "self.home": V([("Glasgow", ["Glasgow"]), ("Leeds", ["Leeds"]), ("York", ["York"])]),
        "self.employer": V([("Harlow Insurance", ["Harlow"]), ("Pebblepath", ["Pebblepath"]), ("Northmill Games", ["Northmill"])]),
        "self.status": V([("dating Aisha", ["Aisha"]), ("engaged to Aisha", ["engaged"]), ("married to Aisha", ["married"])]),
        "self.car": V([("Fiat Punto", ["Punto"]), ("no car (Punto sold)", None), ("Kia Niro", ["Niro"])]),
        "self.phone": V([("iPhone 11", ["iPhone 11"]), ("Pixel 8", ["Pixel 8"])]),
        "self.sport": V([("five-a-side football", ["five-a-side"]), ("cycling", ["cycling"])]),
        "self.health": V([("torn meniscus (knee)", ["meniscus"]), ("knee recovered", ["knee", "recovered"])]),
        "Ewan.home": V([("Aberdeen", ["Aberdeen"]), ("Inverness", ["Inverness"])]),
        "Ewan.car": V([("VW Golf", ["Golf"]), ("Tesla Model 3", ["Model 3"])]),
    },
    memories=[
        M("2022-11-05", "self.home:1", "Another dreich Saturday in Glasgow. Made a pot of lentil soup and watched the rain from the flat."),
        M("2022-11-19", "self.employer:1", "Harlow Insurance announced the Christmas party already. It's November. I test claims software all day, I don't need more forms in my life."),
        M("2022-12-03", "self.status:1", "A year of going out with Aisha today. Took her to the Ubiquitous Chip and she ordered for both of us."),
        M("2022-12-17", "self.car:1", "The Punto wouldn't start again on Great Western Road. Pushed it into a bus stop with two strangers."),
        M("2023-01-07", "self.sport:1", "Five-a-side on Wednesday night, scored twice, limped home happy."),
        M("2023-01-21", "self.phone:1", "Dropped my iPhone 11 in the sink. It survived. I don't deserve it."),
        M("2023-02-04", "Ewan.home:1", "Ewan's settled into his Aberdeen flat. Says the wind off the harbour could strip paint."),
        M("2023-02-18", "", "Burns supper at Aisha's parents'. Her dad did the Address to a Haggis with terrifying commitment."),
        M("2023-03-04", "self.pet~other", "Aisha's parents' cat Duchess sat on my lap all evening. Apparently I'm a cat person now."),
        M("2023-03-18", "self.employer:1", "Regression testing all week at Harlow. Found a bug that let you claim twice for the same car."),
        A("2023-04-01", "self.pet~assistant", "As an AI I don't have a pet of my own, but if you're thinking about a dog, a smaller breed might suit a Glasgow flat."),
        M("2023-04-15", "Ewan.car:1", "Ewan bought a secondhand VW Golf, his first car. He sent me forty photos of it."),
        M("2023-04-29", "", "Walked up the Campsies with Aisha. The wind nearly took my hat to Stirling."),
        M("2023-05-13", "self.home~plan", "Thinking about moving down to England. Leeds has loads of tech jobs and the rents aren't mad."),
        M("2023-05-27", "self.home~room", "Painted the hall and the stairwell in the flat. Landlord said any colour as long as it's magnolia."),
        M("2023-06-10", "self.employer~plan", "Pebblepath interview went well, I think. They're a fintech in Leeds."),
        M("2023-06-24", "self.employer~other", "Aisha's sister joined Deloitte in London. Big celebration dinner, I paid, somehow."),
        M("2023-07-08", "self.employer~plan self.home~plan", "Got the Pebblepath offer. Aisha's in, she can do her PhD from anywhere. Leeds it is."),
        M("2023-07-22", "self.employer~plan", "Handed in my notice at Harlow Insurance today. Four weeks left."),
        M("2023-08-05", "self.car:2", "Sold the Punto to a student for six hundred quid. No car for now, Leeds has decent buses."),
        M("2023-08-26", "self.sport:1", "Last five-a-side game in Glasgow. The lads gave me a signed ball."),
        M("2023-09-02", "self.home:2", "We're in Leeds! The new flat in Headingley has a bay window and a slightly suspicious boiler."),
        M("2023-09-11", "self.employer:2", "First day at Pebblepath. The coffee machine is worth more than my old car."),
        M("2023-09-30", "self.sport:1", "Joined a Thursday five-a-side in Kirkstall. The standard's worse than in Glasgow, so I'm a star."),
        M("2023-10-21", "self.drink~other", "Aisha switched to decaf because she's not sleeping. She's grumpy about it."),
        M("2023-11-11", "", "Leeds Christmas market is already up. Bratwurst for dinner, no regrets."),
        M("2023-12-23", "self.home~visit", "Back in Glasgow for Christmas. Mum still has my school photos up in the hall."),
        A("2024-01-13", "self.drink~assistant", "I don't drink coffee or tea myself, being an AI, but if you're trying to cut caffeine, chicory 'coffee' is a decent swap."),
        M("2024-02-03", "self.phone:2", "Finally switched to Android: got a Pixel 8 in the sale. Everything's in the wrong place."),
        M("2024-02-24", "Ewan.home~plan", "Ewan's moving to Inverness for a job at a distillery. He starts in April."),
        M("2024-03-09", "self.health:1", "Twisted my knee at five-a-side. Physio thinks it's a torn meniscus."),
        M("2024-03-30", "self.health:1", "MRI confirmed the torn meniscus. No football for months. Gutted."),
        M("2024-04-20", "Ewan.home:2", "Ewan's moved to Inverness. He's already complaining about the midges."),
        M("2024-05-04", "self.sport:2", "Physio says cycling is fine for the knee, so I bought a second-hand road bike. Cycling to work from now on."),
        M("2024-05-25", "self.employer:2", "Promoted to QA lead at Pebblepath. Celebrated with a curry on the Otley Road."),
        M("2024-06-15", "self.status:2", "Asked Aisha to marry me on the beach at Whitby. She said yes before I'd finished the sentence. We're engaged!"),
        M("2024-07-06", "self.pet~plan", "If we ever get a dog it's going to be a greyhound, Aisha has decided. I wasn't consulted."),
        M("2024-07-27", "self.sport:2", "Cycling the Dales loop on Saturday: 80 km and one very angry sheep."),
        M("2024-08-17", "self.status:2", "Spent the whole day on the wedding guest list. Her family alone is 140 people."),
        M("2024-09-07", "Ewan.car:2", "Ewan traded the Golf in for a Tesla Model 3. Says it's cheaper to run. I'll believe it when I see it."),
        M("2024-10-05", "self.pet~other", "The neighbours' spaniel, Rolo, comes over the fence every morning. Not our dog, but he acts like it."),
        M("2024-11-02", "self.drink~plan", "Should I try that mushroom coffee everyone's on about? Aisha says it tastes like a forest floor."),
        M("2024-11-30", "self.home~plan", "Aisha's transferring her PhD to York, so we're looking at houses there."),
        M("2025-01-18", "self.health:2 self.sport:2", "Physio signed me off: knee fully recovered. Allowed to play football again, but honestly I prefer cycling now."),
        M("2025-02-08", "self.home~plan", "Offer accepted on a little terraced house in York! Moving at the end of April if the solicitors behave."),
        M("2025-03-01", "self.employer:2", "Pebblepath launched the savings feature and I've been testing until midnight all week."),
        M("2025-03-22", "self.home~room", "Moved the desk into the box room of the Headingley flat to free up the living room for wedding crafts."),
        M("2025-04-27", "self.home:3 self.pet~room", "Moving day. Got the keys to the York house. There's a cat flap from the previous owners and we have no cat."),
        M("2025-05-17", "self.home:3 self.sport:2", "Settled in York now. Cycling to the station along the river, twelve minutes door to door."),
        M("2025-06-07", "self.car:3", "Bought a Kia Niro, our first car together. Aisha named it Nigel."),
        M("2025-07-05", "self.home~visit", "Stag do in Glasgow. My liver is filing a formal complaint."),
        M("2025-08-09", "self.status:3", "We got married! Small ceremony at the Merchant Adventurers' Hall, huge party after. Mr and Mrs Reid."),
        M("2025-08-30", "self.car~visit", "Honeymoon on Skye. Rented a campervan, which I drove into a ditch once. Only once."),
        M("2025-09-20", "self.employer~plan", "Northmill Games reached out about an engineering manager role. York-based, no commute."),
        M("2025-10-11", "self.employer~plan", "Took the Northmill job. Told Pebblepath today, they were decent about it."),
        M("2025-11-03", "self.employer:3", "First day at Northmill Games. My team tests a game about a goose who runs a post office."),
        M("2025-11-22", "self.drink~other self.home~return", "Aisha's gone back to coffee after two years on decaf. Dark times are over."),
        M("2025-12-20", "Ewan.car:2 Ewan.home:2", "Ewan drove the Model 3 all the way down from Inverness for Christmas. Eleven hours with charging stops."),
        M("2026-01-17", "self.status:3", "Married life verdict so far: we fight about the thermostat and nothing else."),
        M("2026-02-14", "", "Valentine's dinner at home. Made risotto, only slightly crunchy."),
        M("2026-03-07", "self.home~room", "Repainted the kitchen in the York house a dark green. Aisha says it's like living in a wine bottle."),
        M("2026-04-04", "self.car:3", "The Niro did 600 miles over the Easter trip without a complaint. Best car I've ever owned."),
        A("2026-05-02", "self.home~assistant", "You mentioned your flat in Leeds has a bay window, so a reading nook there would get great light."),
        M("2026-05-30", "self.sport:2 self.health:2", "Cycling 100 km for the hospice charity ride. Knee's fully recovered, didn't make a peep."),
        M("2026-06-27", "self.employer:3", "Half a year at Northmill. The goose game ships in September and I'm weirdly emotional about it."),
        M("2026-07-25", "self.drink~visit", "Breakfast at the B&B in Whitby: a pot of tea and a full English. Holiday mode."),
        M("2026-08-22", "Ewan.home~plan", "Ewan's thinking of moving back to Glasgow. He's said that before."),
        M("2026-09-19", "self.phone:2", "Pixel 8 screen cracked but it still works. Not buying a new phone until this one properly dies."),
        M("2026-10-17", "", "Took Aisha's nephew to the railway museum. He cried when we left. So did I, a bit."),
        M("2026-11-07", "self.home:3", "Still getting lost in the snickelways. Living in York is like living inside a puzzle."),
        A("2024-04-06", "self.health~assistant", "I don't have knees to injure, being an AI, but after a meniscus tear swimming and cycling are usually the gentlest ways to stay active."),
        M("2024-09-21", "self.status~plan", "Thinking we should just elope to Gretna Green and skip the guest list. Aisha says her mum would disown us."),
        M("2025-01-04", "self.phone~other", "Aisha got the new iPhone 16 and keeps airdropping me pictures I can't open."),
        M("2025-05-03", "self.sport~other", "Aisha's taken up climbing at the wall in York. She's better than me after two weeks."),
        M("2025-10-25", "self.status~other", "Ewan got engaged to Fiona up in Inverness. Mum cried down the phone for ten minutes."),
        M("2025-12-06", "self.health~other", "Aisha's dad had his knee replaced. He's already bored of the sofa."),
        M("2026-08-08", "self.phone~plan", "Thinking of getting the Pixel 10 when it drops. Or I'll just keep this one forever."),
        M("2026-09-05", "self.sport~return", "Back to five-a-side for one charity match, for old times' sake. Everything hurts. Back on the bike on Monday."),
    ],
    questions=[
        Q("Where do I live now?", "self.home"),
        Q("Am I still living in Leeds?", "self.home"),
        Q("Who do I work for these days?", "self.employer"),
        Q("which company am i at", "self.employer"),
        Q("Am I married?", "self.status"),
        Q("What car do I drive?", "self.car"),
        Q("What phone have I got at the moment?", "self.phone"),
        Q("What sport do I do currently?", "self.sport"),
        Q("Is my knee still injured?", "self.health"),
        Q("Where does Ewan live now?", "Ewan.home"),
        Q("What does Ewan drive these days?", "Ewan.car"),
        Q("Which company did I work for before Northmill?", "self.employer", kind="history", ask=2),
        Q("What car did I have before the Niro?", "self.car", kind="history", ask=1),
        Q("Do I have a pet?", "self.pet", kind="none"),
        Q("What's my morning drink these days?", "self.drink", kind="none"),
    ],
)

# ---------------------------------------------------------------- u3: Hannah Lindqvist (English)
PEOPLE["u3"] = dict(
    who="Hannah Lindqvist, Australian barista -> vet nurse (Adelaide -> Melbourne)",
    lang="en",
    values={
        "self.home": V([("Adelaide", ["Adelaide"]), ("Melbourne", ["Melbourne"])]),
        "self.employer": V([("barista at Bean There", ["barista"]), ("Northside Vet Clinic", ["Northside"]), ("Southbank Animal Hospital", ["Southbank"])]),
        "self.partner": V([("Jordan", ["Jordan"]), ("single", ["single"])]),
        "self.pet": V([("Bowie (kelpie)", ["Bowie"]), ("Bowie and Mango (cockatiel)", ["Bowie", "Mango"])]),
        "self.diet": V([("vegan", ["vegan"]), ("vegetarian", ["vegetarian"])]),
        "self.drink": V([("flat white", ["flat white"]), ("chai", ["chai"])]),
        "self.hobby": V([("pottery", ["pottery"]), ("none (pottery on hold)", None), ("pottery again", ["pottery"])]),
        "Mei.home": V([("Sydney", ["Sydney"]), ("London", ["London"])]),
        "Mei.employer": V([("Atlassian", ["Atlassian"]), ("Monzo", ["Monzo"])]),
    },
    memories=[
        M("2023-06-03", "self.employer:1", "Pulled about two hundred flat whites at Bean There this morning. My wrist hates me. Barista life."),
        M("2023-06-17", "self.home:1 self.pet:1", "Adelaide in winter is grey but Bowie doesn't mind. Walked him along the Torrens near our place."),
        M("2023-06-24", "", "Ran out of oat milk in the middle of the rush. The customers nearly rioted."),
        M("2023-07-01", "self.drink:1", "A flat white with oat milk before every shift, made by me, for me."),
        M("2023-07-15", "self.diet:1", "Three years vegan this month. Made a cashew cheese that actually tastes like cheese."),
        M("2023-07-29", "self.hobby:1", "Pottery class on Tuesdays in Norwood. My first bowl is a very confident ashtray."),
        M("2023-08-12", "Mei.home:1 Mei.employer:1", "Mei's loving Sydney. She says her team at Atlassian has a pet bearded dragon."),
        M("2023-08-26", "", "Made a massive batch of dhal and froze half. Future me will be grateful."),
        M("2023-09-09", "self.partner:1", "Second date with Jordan. We went to the zoo and argued about the best penguin."),
        M("2023-09-23", "self.diet~pet", "Bowie's on a new grain-free diet, vet's orders. He looks at his bowl like it insulted him."),
        M("2023-10-07", "self.partner:1", "Jordan and I are officially together. He's already met Bowie, who approved."),
        M("2023-10-21", "self.home~other", "Mum has moved into a retirement village in Glenelg. She's the youngest there and already runs the bingo."),
        M("2023-11-04", "self.car~plan", "If I ever get a car it'll be a Corolla. Boring and unkillable."),
        M("2023-11-18", "self.employer~plan", "Applied for a trainee vet nurse position at Northside Vet Clinic. Fingers crossed."),
        M("2023-12-02", "self.home~plan", "Thinking of moving to Hobart one day, when we're old and want quiet. Jordan says no, too cold."),
        M("2023-12-16", "", "Christmas carols at the café all day. I now know every word to Mariah against my will."),
        M("2024-01-13", "self.employer~plan", "Got the Northside job! Trainee vet nurse. Told the café I'm leaving in a fortnight."),
        M("2024-02-05", "self.employer:2", "First day at Northside Vet Clinic. Held a very angry cat for a blood test. Loved it."),
        M("2024-02-24", "self.car~other", "Dad lent me his ute to move a bookshelf. Drove it like a tank."),
        M("2024-03-02", "self.diet~other", "Jordan's cooking a vegan lasagne tonight. He's not vegan but he's trying."),
        M("2024-03-16", "self.partner:1 self.home:1", "Jordan has moved into my flat in Adelaide. Bowie now sleeps between us, which is romantic."),
        M("2024-04-06", "self.hobby:1", "Pottery update: glazed six mugs, two survived the kiln."),
        M("2024-05-04", "self.diet:2", "Okay, I'm not vegan anymore. Eggs from Mum's chooks broke me. Vegetarian now and at peace."),
        A("2024-05-25", "self.diet~assistant", "As an AI I don't eat, so I can't be vegan myself, but a good B12 supplement matters for anyone cutting out animal products."),
        M("2024-06-15", "Mei.employer~plan Mei.home~plan", "Mei got a job offer from Monzo in London. She's terrified and thrilled."),
        M("2024-07-06", "Mei.home:2 Mei.employer:2", "Mei's officially in London and started at Monzo this week. She sent a photo of a grey sky."),
        M("2024-07-20", "self.home~plan", "Jordan got into the Master's at Melbourne Uni. We're moving in September!"),
        M("2024-08-24", "self.hobby:2", "Packed up all my clay tools. No studio lined up over there yet, so that hobby's on hold."),
        M("2024-08-31", "self.employer:2", "Last shift at Northside. The vets gave me a card signed with paw prints."),
        M("2024-09-07", "self.home:2 self.pet:1", "We finally unpacked in Melbourne. The new flat in Brunswick has a tiny courtyard for Bowie."),
        M("2024-09-28", "self.employer~plan", "Interview at Southbank Animal Hospital went great. They have an MRI for dogs!"),
        M("2024-10-14", "self.employer:3", "First day at Southbank Animal Hospital. It's huge. Got lost twice looking for the surgery."),
        M("2024-10-26", "self.home~room", "Bowie has claimed the laundry as his bedroom. He won't sleep anywhere else in the new flat."),
        M("2024-12-24", "self.home~visit self.drink~visit", "Back in Adelaide for Christmas. Had a flat white at Bean There for old times' sake."),
        M("2025-01-11", "self.drink:2", "Switched my morning flat white for chai. Melbourne baristas are too judgy about my milk."),
        M("2025-02-01", "", "Forty degrees. Bowie and I lay on the bathroom tiles all afternoon."),
        M("2025-03-01", "self.partner:2 self.home~other", "Jordan and I broke up. He's moving back to Adelaide after his degree. Single again at 29, with a dog and a lot of feelings."),
        M("2025-03-22", "self.home~room", "Repainted the bathroom now that it's just me. Terracotta. Bold."),
        M("2025-04-19", "Mei.home~plan", "Mei is thinking of moving back to Sydney next year. Nothing decided."),
        A("2025-05-10", "self.home~assistant", "You said you live in Adelaide, so the Central Market would be a good place to find those ingredients."),
        M("2025-05-24", "self.car~other", "Dad bought a new ute, a Ranger. Mum hates it."),
        M("2025-06-07", "", "Long shift: three dogs who ate chocolate. Easter leftovers, apparently."),
        M("2025-07-12", "self.pet:2", "Brought home Mango, a cockatiel nobody came back for at the hospital. Bowie is deeply suspicious of Mango."),
        M("2025-08-09", "self.pet:2", "Mango has learned to whistle the microwave beep. Bowie hates it."),
        M("2025-08-30", "self.partner:2", "Six months single and honestly it's fine. Took myself to the movies."),
        M("2025-09-20", "self.home~other", "My brother Liam moved to Perth for the mines. Says the pay is obscene."),
        M("2025-10-18", "self.hobby:3 self.home~return", "Back at the pottery wheel! Found a studio in Coburg with Sunday classes."),
        M("2025-11-08", "self.drink:2", "Chai and toast for breakfast, Mango on my shoulder stealing crumbs."),
        M("2025-12-20", "Mei.home~visit", "Mei's home in Sydney for Christmas, then back to London in January."),
        M("2026-01-17", "self.car~visit", "Rented a campervan in Tassie for a week. Drove it badly."),
        M("2026-02-07", "self.diet:2", "Made vegetarian lasagne for the clinic potluck. Three people asked for the recipe."),
        M("2026-02-21", "self.home~past", "Old Adelaide friends keep asking when I'm moving back. Not any time soon."),
        M("2026-03-07", "self.employer:3", "Southbank promoted me to senior vet nurse. More paperwork, same angry cats."),
        M("2026-04-04", "self.hobby:3", "Pottery studio firing day. My first teapot that pours without dribbling."),
        M("2026-05-02", "self.home~pet", "Mango's got a new cage by the window and won't stop singing to the pigeons."),
        M("2026-05-30", "self.car~plan", "Thinking of getting a car for runs to the clay supplier, but the tram is fine really."),
        M("2026-06-27", "Mei.home:2 Mei.employer:2", "Mei says London's lost its charm, but she's staying at Monzo for the visa."),
        M("2026-07-25", "", "Winter flu knocked me out for a week. Bowie was an excellent nurse."),
        M("2026-08-22", "self.pet:2", "Bowie and Mango have called a truce. Mango rides on Bowie's back now."),
        M("2026-09-19", "self.home:2", "Two years in Melbourne this month. I even have opinions about footy now."),
        M("2026-10-10", "self.partner:2 self.hobby:3", "Single, 30, with a dog, a bird and a pottery habit. Could be worse."),
        M("2024-04-20", "self.drink~other", "Jordan only drinks long blacks. No milk, no joy."),
        M("2024-11-30", "self.pet~plan", "Thinking about fostering kittens over summer. The landlord hasn't said no yet."),
        A("2025-04-05", "self.hobby~assistant", "As an AI I don't have hobbies, but if you miss working with clay, community studios often rent out wheel time by the hour."),
        M("2025-06-21", "self.partner~other", "Jordan's seeing someone new back in Adelaide. Good for him. Ate a whole tub of ice cream anyway."),
        A("2025-09-06", "self.partner~assistant", "As an AI I don't date, but going to the movies on your own is honestly underrated."),
        M("2025-11-22", "self.partner~other", "Mei's moved in with her boyfriend Tom in London. She says he cooks, which settles it."),
        M("2026-01-03", "self.hobby~other", "Mei's taken up pottery in London and sent me a photo of her first bowl. It's better than my first one."),
        M("2026-03-21", "self.pet~other", "Mum got a puppy, a cavoodle called Pip. The retirement village is in love."),
    ],
    questions=[
        Q("Where do I live these days?", "self.home"),
        Q("Am I still in Adelaide?", "self.home"),
        Q("Where do I work now?", "self.employer"),
        Q("Am I still at Northside Vet Clinic?", "self.employer"),
        Q("Am I seeing anyone at the moment?", "self.partner"),
        Q("What pets do I have?", "self.pet"),
        Q("am i still vegan", "self.diet"),
        Q("What do I drink in the morning now?", "self.drink"),
        Q("Am I doing any pottery currently?", "self.hobby"),
        Q("Where does Mei live now?", "Mei.home"),
        Q("Who does Mei work for?", "Mei.employer"),
        Q("Is Mei still at Atlassian?", "Mei.employer"),
        Q("What did I do for work before I became a vet nurse?", "self.employer", kind="history", ask=1),
        Q("What was my ex's name?", "self.partner", kind="history", ask=1),
        Q("What car do I drive?", "self.car", kind="none"),
    ],
)

# ---------------------------------------------------------------- u4: Jamal Carter (English)
PEOPLE["u4"] = dict(
    who="Jamal Carter, Canadian math teacher -> data analyst (Toronto -> Hamilton -> Montreal)",
    lang="en",
    values={
        "self.home": V([("Toronto", ["Toronto"]), ("Hamilton", ["Hamilton"]), ("Montreal", ["Montreal"])]),
        "self.employer": V([("Northview Secondary School", ["Northview"]), ("Maple Freight", ["Maple Freight"])]),
        "self.pet": V([("no pet (building rule)", None), ("Pickles (beagle)", ["Pickles"])]),
        "self.car": V([("Honda Civic", ["Civic"]), ("Toyota RAV4", ["RAV4"])]),
        "self.phone": V([("Galaxy S21", ["S21"]), ("iPhone 15", ["iPhone 15"])]),
        "self.sport": V([("hockey", ["hockey"]), ("swimming", ["swimming"]), ("hockey", ["hockey"])]),
        "self.health": V([("high blood pressure", ["blood pressure", "high"]), ("blood pressure normal", ["blood pressure", "normal"])]),
        "Keisha.employer": V([("St. Michael's Hospital", ["St. Michael's"]), ("Hamilton General", ["Hamilton General"]), ("Jewish General", ["Jewish General"])]),
    },
    memories=[
        M("2024-01-08", "self.employer:1 self.home~return", "Back to school after the break. Grade 11 functions first period at Northview Secondary is brutal."),
        M("2024-01-20", "self.home:1", "Snowstorm in Toronto and the 504 streetcar gave up. Walked home along King to our apartment."),
        M("2024-02-03", "self.sport:1", "Beer league hockey Tuesday. We lost 7-2 and I was on the ice for five of them."),
        M("2024-02-17", "self.phone:1", "Still on my Galaxy S21 and the battery lasts until lunch."),
        M("2024-02-28", "", "Marked 120 quizzes this weekend. My red pen ran dry."),
        M("2024-03-02", "Keisha.employer:1", "Keisha's twelve-hour shift at St. Michael's ran to fourteen. I made jollof and she fell asleep eating it."),
        M("2024-03-16", "self.car:1", "Changed the Civic's winter tires myself. Took three hours and a YouTube tutorial."),
        M("2024-04-06", "self.health:1", "Doctor says my blood pressure is high. 150 over 95. I'm 34!"),
        M("2024-04-20", "self.pet:1", "No pets allowed in this building, which is the only reason we don't have a dog yet."),
        M("2024-05-04", "self.employer~plan", "Applied for a data analyst job at Maple Freight. Twelve years of teaching math has to count for something."),
        M("2024-05-18", "Keisha.employer~plan self.home~plan", "Keisha's been offered a spot at Hamilton General. Better pay, and rents are way lower out there."),
        M("2024-06-01", "self.employer~plan", "Got the Maple Freight job! Starting in August. Told the principal I'm not coming back in September."),
        M("2024-06-22", "self.employer:1", "Last day at Northview. The kids gave me a card that says 'thanks for the derivatives'. Cried in the parking lot."),
        M("2024-07-13", "self.home~plan", "Signed the lease on a townhouse in Hamilton. Move is August 24."),
        M("2024-08-06", "self.employer:2", "First day at Maple Freight. It's all SQL and spreadsheets about trucks and I'm weirdly happy."),
        M("2024-08-25", "self.home:2", "We're in Hamilton now. The townhouse has a backyard, a basement and a very loud neighbour."),
        M("2024-09-07", "Keisha.employer:2", "Keisha's first shift at Hamilton General. She says the cafeteria beats St. Mike's."),
        M("2024-09-21", "self.home~room", "Turned the basement into a home office. Finally a door I can close during meetings."),
        M("2024-10-12", "self.pet:2", "We adopted a beagle! His name is Pickles and he has already eaten a sock."),
        M("2024-10-26", "self.diet~pet", "Pickles has a sensitive stomach, so he's on a special limited-ingredient food now."),
        M("2024-11-09", "self.phone:2", "Upgraded to an iPhone 15 after the S21 died mid-meeting. Keisha is smug, she's been Team iPhone forever."),
        M("2024-11-28", "", "The dashboard I built went live today. My manager said 'nice work' twice."),
        M("2024-12-07", "self.pet~plan", "Keisha wants a second dog. Pickles would hate it."),
        M("2024-12-21", "self.home~visit", "Back in Toronto for Christmas at my parents'. Mom still cooks for twenty people."),
        M("2025-01-11", "self.diet~other", "Keisha's gone vegetarian for the new year. I'm eating a lot of lentils in solidarity."),
        M("2025-02-01", "self.sport:2 self.health:1", "Doctor says no contact hockey until my blood pressure is under control. Started swimming at the Y three mornings a week instead."),
        M("2025-02-22", "self.sport:2", "Swimming is growing on me. Forty lengths this morning without stopping."),
        M("2025-03-08", "self.car:2", "Traded in the Civic for a Toyota RAV4. Pickles needs the trunk space, apparently."),
        A("2025-03-29", "self.diet~assistant", "As an AI I don't eat, so I don't follow any diet myself, but if you're curious about keto, here's how it usually works."),
        M("2025-04-19", "self.diet~plan", "Thinking of trying keto to lose the last 15 pounds. Keisha rolls her eyes."),
        M("2025-05-10", "self.employer:2", "Ran a workshop at Maple Freight on SQL for the dispatch team. Only one person fell asleep."),
        M("2025-05-31", "self.car~other", "Keisha's sister bought a Mazda the same red as a fire truck."),
        M("2025-06-21", "self.instrument~other", "Keisha's learning guitar from YouTube. Pickles howls along."),
        M("2025-07-12", "self.instrument~plan", "If I had any free time I'd learn the saxophone. I don't."),
        A("2025-08-02", "self.instrument~assistant", "I don't play any instruments myself, being an AI, but the ukulele is a friendly first instrument for an adult beginner."),
        M("2025-08-23", "self.home~plan self.employer:2", "Maple Freight wants me in the Montreal office from January. They'll pay for the move."),
        M("2025-09-13", "Keisha.employer~plan", "Keisha interviewed at the Jewish General in Montreal. Her French is better than mine, which isn't hard."),
        M("2025-09-27", "", "Tried 'Je voudrais un café' at a Tim Hortons. The teenager at the counter was very confused."),
        M("2025-10-04", "self.health:2", "Blood pressure is back to normal! 118 over 76. The swimming and less salt actually worked."),
        M("2025-10-25", "Keisha.employer~plan", "Keisha got the Jewish General job. She starts in January, same as my transfer."),
        M("2025-11-15", "self.instrument~pet", "Pickles chewed the strap off Keisha's guitar. He is not sorry."),
        M("2025-12-06", "self.home~room", "Painted the spare room of the Hamilton townhouse before we list it for rent. Never again."),
        M("2026-01-10", "self.home:3", "Moved to Montreal! Minus 22 on moving day. The new apartment in Verdun has a spiral staircase Pickles refuses to climb."),
        M("2026-01-24", "Keisha.employer:3", "Keisha's first week at the Jewish General. They've already asked her to cover nights."),
        M("2026-02-14", "self.sport:3 self.health:2 self.home~return", "Back to beer league hockey! Doctor cleared me, blood pressure has been normal for four months. Found a Thursday team in Verdun."),
        M("2026-03-07", "self.sport:3", "Swam at the Verdun pool once and the lifeguard yelled at me in French. Sticking with hockey."),
        M("2026-03-28", "self.employer:2 self.home:3", "First Montreal office day at Maple Freight. The espresso machine alone justifies the move."),
        M("2026-04-18", "self.home~other", "My brother Andre moved to Calgary. Says he can see the mountains from his kitchen."),
        M("2026-05-09", "self.phone:2", "iPhone 15 screen cracked on the ice. Still works, still my phone."),
        M("2026-05-30", "", "Poutine three times this week. Don't tell the doctor."),
        M("2026-06-20", "self.car:2 self.home~visit", "RAV4 road trip to Quebec City with Pickles. He barked at every single cow."),
        M("2026-07-11", "self.home~room", "Kitchen reno at the Verdun place: new counters, same tiny fridge."),
        M("2026-08-01", "self.home~plan", "Thinking of moving out to the suburbs, Laval maybe, to get a yard for Pickles. Not yet."),
        M("2026-08-22", "Keisha.employer:3", "Keisha loves the Jewish General, even the night shifts."),
        M("2026-09-12", "self.pet:2", "Pickles turned three. Got him a cake made of peanut butter and pumpkin."),
        M("2026-09-26", "self.home:3", "Nine months living in Montreal and I've officially switched to St-Viateur bagels."),
        M("2026-10-03", "self.employer:2", "Two years at Maple Freight, promoted to senior analyst."),
        M("2026-10-24", "self.sport:3", "Hockey playoffs Thursday: scored the winner and then had to sit down for ten minutes."),
        M("2026-11-07", "self.health:2", "Blood pressure check: 120 over 78, still normal."),
        M("2024-06-08", "self.health~other", "Dad's on blood pressure pills now too. Runs in the family, apparently."),
        A("2024-10-05", "self.phone~assistant", "I don't have a phone myself, being an AI, but if the S21's battery is that bad, a battery replacement is cheaper than a new phone."),
        M("2025-06-28", "self.car~visit", "Rented a Mustang convertible in Florida for the week. Keisha made me put the roof up after an hour."),
        M("2025-07-26", "self.phone~other", "Keisha dropped her iPhone in the Bay at Pier 4. A kayaker fished it out."),
        M("2025-11-29", "self.pet~other", "Andre got a husky. It howls at his microwave."),
        M("2026-02-28", "self.sport~visit", "Ski weekend at Mont Tremblant. I fell off the chairlift, which I didn't know was possible."),
        M("2026-04-25", "self.sport~other", "Keisha joined a curling club. She has a special broom and a lot of opinions."),
        M("2026-07-25", "self.health~pet", "Pickles has an ear infection, so it's drops twice a day for two weeks. He hates me."),
        M("2026-09-05", "self.car~plan", "Thinking about an EV next time, maybe an Ioniq 5. The RAV4 has years left though."),
    ],
    questions=[
        Q("Where do I live now?", "self.home"),
        Q("Do I still live in Hamilton?", "self.home"),
        Q("Who's my employer?", "self.employer"),
        Q("Am I still teaching at Northview?", "self.employer"),
        Q("Do I have a pet?", "self.pet"),
        Q("What car do I drive now?", "self.car"),
        Q("what phone do i use", "self.phone"),
        Q("What's my sport these days?", "self.sport"),
        Q("Is my blood pressure still high?", "self.health"),
        Q("Where does Keisha work now?", "Keisha.employer"),
        Q("Is Keisha still at Hamilton General?", "Keisha.employer"),
        Q("Where did I live before Montreal?", "self.home", kind="history", ask=2),
        Q("What car did I have before the RAV4?", "self.car", kind="history", ask=1),
        Q("What diet am I on these days?", "self.diet", kind="none"),
        Q("What instrument do I play?", "self.instrument", kind="none"),
    ],
)

# ---------------------------------------------------------------- u5: 王磊 (Chinese)
PEOPLE["u5"] = dict(
    who="王磊, 后端工程师 (武汉 -> 深圳 -> 珠海)",
    lang="zh",
    values={
        "self.home": V([("武汉", ["武汉"]), ("深圳", ["深圳"]), ("珠海", ["珠海"])]),
        "self.employer": V([("星河科技", ["星河科技"]), ("鲸鱼出行", ["鲸鱼出行"]), ("海豚云", ["海豚云"])]),
        "self.partner": V([("晓琳", ["晓琳"]), ("单身", ["单身"]), ("苏苏", ["苏苏"])]),
        "self.pet": V([("乌龟阿呆", ["阿呆"]), ("柯基可乐", ["可乐"])]),
        "self.car": V([("比亚迪秦", ["秦"]), ("小鹏 P7", ["P7"])]),
        "self.drink": V([("豆浆", ["豆浆"]), ("冰美式", ["冰美式"]), ("豆浆", ["豆浆"])]),
        "self.sport": V([("羽毛球", ["羽毛球"]), ("游泳", ["游泳"])]),
        "小林.employer": V([("华为", ["华为"]), ("大疆", ["大疆"])]),
    },
    memories=[
        M("2023-03-04", "self.home:1", "武汉的春天说来就来，昨天穿羽绒服今天穿短袖。在武汉住了五年还是不习惯。"),
        M("2023-03-18", "self.employer:1", "星河科技又要加班上线，这个月第三次了。"),
        M("2023-04-01", "self.partner:1", "晓琳过生日，带她去楚河汉街吃了那家日料，她很开心。"),
        M("2023-04-15", "self.drink:1", "早上一杯热豆浆加两根油条，这才是过早的正确打开方式。"),
        M("2023-04-29", "self.sport:1", "周末打了三个小时羽毛球，胳膊抬不起来了。"),
        M("2023-05-13", "self.pet:1", "我的乌龟阿呆今天在阳台晒了一下午太阳，一动不动。"),
        M("2023-05-27", "小林.employer:1", "表弟小林在华为做测试，说最近也忙得要死。"),
        M("2023-06-10", "self.home~room", "客厅换了新沙发，灰色的，晓琳挑的。"),
        M("2023-06-24", "self.home~other", "妈妈说她这辈子都不离开武昌，楼下的菜市场她熟。"),
        M("2023-07-08", "self.home~plan", "打算明年换个城市发展，深圳机会多一点。先想想。"),
        M("2023-07-22", "", "热干面加个蛋，再来一碗蛋酒，吃撑了。"),
        M("2023-08-05", "self.car~other", "姐姐在杭州买了辆新车，特斯拉 Model Y，天天在朋友圈晒。"),
        A("2023-08-19", "self.phone~assistant", "作为AI，我没有自己的手机。如果你在纠结买哪款手机，可以先说说预算和最看重的功能。"),
        M("2023-09-02", "self.car~plan", "想给自己买辆车，不过在武汉上班坐地铁也挺方便，再说吧。"),
        M("2023-09-16", "self.sport:1", "羽毛球馆办了年卡，周三周六雷打不动。"),
        M("2023-10-14", "self.home~visit", "国庆回黄冈老家看爷爷奶奶，村里修了新路。"),
        M("2023-11-04", "", "今天写了一天接口文档，眼睛都花了。"),
        M("2023-12-02", "self.home~other self.partner:1", "晓琳说她想去上海发展，我们聊到凌晨，没聊出结果。"),
        M("2024-01-06", "self.partner:2", "和晓琳分手了。五年，说散就散。现在又是单身一个人了。"),
        M("2024-01-20", "self.employer~plan self.home~plan", "收到鲸鱼出行的 offer，在深圳，薪水涨了四成。"),
        M("2024-02-03", "self.employer~plan", "跟星河科技提了离职，领导挽留了两次。"),
        M("2024-02-24", "self.home:1", "春节在武汉过完，行李打包好了，下周出发。"),
        M("2024-03-04", "self.home:2", "搬到深圳了！租的房子在南山，离公司骑车十分钟。"),
        M("2024-03-11", "self.employer:2", "第一天去鲸鱼出行上班，工位旁边就是落地窗。"),
        M("2024-04-06", "self.drink:2", "深圳的早餐店吃不出武汉的味道，干脆每天早上一杯冰美式续命。"),
        M("2024-04-27", "self.pet:1", "阿呆跟着我坐高铁来了深圳，一路很淡定。"),
        M("2024-05-18", "小林.employer:1", "小林也在深圳，周末一起吃了潮汕牛肉火锅。他还在华为，天天加班。"),
        M("2024-06-08", "self.home~room", "阳台改成了小书房，放了张桌子和一盆绿萝。"),
        M("2024-07-06", "self.pet:2", "把阿呆送给了侄子，他喜欢得不得了。然后领养了一只柯基，叫可乐。"),
        M("2024-07-27", "self.diet~pet", "可乐换了新狗粮，说是对肠胃好，吃得很香。"),
        M("2024-08-17", "self.drink:2", "冰美式已经喝成习惯了，一天两杯。"),
        M("2024-09-07", "self.employer:2", "鲸鱼出行新版本上线，熬了两个通宵。"),
        M("2024-10-12", "self.car:1", "提车了！比亚迪秦，白色的，第一辆自己的车。"),
        M("2024-11-02", "self.car:1 self.home~visit", "开着秦回了趟武汉看妈妈，开了七个小时。"),
        M("2024-11-23", "self.diet~other", "妈妈最近在控糖，米饭都换成杂粮饭了。"),
        M("2024-12-14", "self.diet~plan", "考虑明年开始少吃碳水，减减肚子。说说而已。"),
        M("2025-01-11", "self.sport:1", "羽毛球打着打着膝盖有点疼，先歇一阵。"),
        M("2025-02-08", "小林.employer:2", "小林从华为跳槽去了大疆，做无人机的，说终于能摸到实物了。"),
        A("2025-03-01", "self.home~assistant", "你之前说你住在武汉，那春天可以去东湖看樱花，人少的话早上去最好。"),
        M("2025-03-22", "", "三月已经二十八度了，可乐热得趴在地砖上不动。"),
        M("2025-04-12", "self.partner~plan", "朋友介绍认识了一个叫苏苏的女生，约了周末看电影。"),
        M("2025-05-03", "self.partner:3", "和苏苏在一起了。她说喜欢上我是因为可乐。"),
        M("2025-05-24", "self.phone~other", "苏苏换了 iPhone 16，天天拿它给可乐拍照。"),
        M("2025-06-14", "self.phone~plan", "打算换手机，在华为 Mate 70 和小米之间纠结。"),
        M("2025-07-05", "self.employer:2", "鲸鱼出行裁员，我们组保住了，但气氛很差。"),
        M("2025-07-26", "self.employer~plan", "面了珠海的海豚云，做海上风电的云平台，聊得很投机。"),
        M("2025-08-16", "self.employer~plan self.home~plan", "拿到海豚云的 offer 了。苏苏说珠海离她老家中山很近，她也愿意过去。"),
        M("2025-09-06", "self.employer~plan", "从鲸鱼出行离职了，同事送了一个鲸鱼玩偶。"),
        M("2025-10-02", "self.home:3", "国庆假期搬家，住进了珠海的新房子，窗外就是情侣路。"),
        M("2025-10-09", "self.employer:3", "第一天到海豚云报到，公司在横琴，骑电动车过去二十分钟。"),
        M("2025-10-25", "self.sport:2", "海边有个公共泳池，开始每天早上游泳一千米，羽毛球不打了。"),
        M("2025-11-15", "self.drink:3 self.home~return", "又回到豆浆了，楼下早餐店的豆浆是现磨的，冰美式戒了。"),
        M("2025-12-06", "self.home~room", "卧室刷成了浅蓝色，苏苏说像住在海底。"),
        M("2026-01-10", "self.home~visit", "元旦回武汉看妈妈，她说我晒黑了。"),
        M("2026-02-07", "self.home~other", "姐姐说想搬来珠海，她受够了杭州的冬天。"),
        M("2026-03-14", "self.car:2", "把秦卖了，换了辆小鹏 P7，开起来安静多了。"),
        M("2026-04-04", "self.partner:3 self.pet:2", "苏苏搬过来跟我一起住了，可乐现在有两个人遛。"),
        M("2026-05-02", "self.sport:2", "游泳半年，体重掉了八斤，肩膀也不疼了。"),
        M("2026-05-30", "self.employer:3", "海豚云的项目评审，老板夸了我的架构图。"),
        M("2026-06-27", "小林.employer:2", "小林说大疆要派他去欧洲出差三个月。"),
        M("2026-07-25", "self.car:2 self.partner:3 self.pet:2 self.home~visit", "开着 P7 带苏苏和可乐去阳江海陵岛玩，可乐第一次见到海。"),
        M("2026-08-22", "self.drink:3 self.sport:2 self.home:3", "早上一杯豆浆，下楼游泳，回来上班，珠海的日子挺舒服。"),
        A("2026-09-19", "self.pet~assistant", "作为AI我没有宠物，也没法养狗。不过柯基确实要控制体重，可乐的饭量可以适当减一点。"),
        M("2026-10-17", "self.partner:3", "打算明年和苏苏去领证，先跟两边父母说了。"),
        M("2026-11-07", "", "降温了，也只是从三十度降到二十五度。"),
        M("2024-09-21", "self.pet~other", "姐姐家养了一只布偶猫，叫年糕，视频里胖得像个枕头。"),
        M("2024-10-26", "self.sport~other", "小林迷上了飞盘，每周末都去深圳湾，晒得跟炭一样。"),
        M("2025-02-22", "self.drink~visit", "去香港出差一周，每天早上一杯港式奶茶，回来还有点想。"),
        M("2025-06-28", "self.drink~other", "苏苏每天早上一杯燕麦拿铁，说不喝就睁不开眼。"),
        M("2025-09-20", "self.partner~other", "小林谈恋爱了，女朋友是大疆的同事，天天秀恩爱。"),
        M("2025-11-29", "self.partner~other", "听说晓琳在上海结婚了。挺好的，真心祝福。"),
        M("2026-06-13", "self.sport~plan", "打算报个网球课，苏苏说想一起学。还没交钱。"),
        M("2026-01-12", "self.home~return self.sport~visit", "回到武汉的老羽毛球馆，和星河科技的老同事打了一场，还是那个味道。"),
    ],
    questions=[
        Q("我现在住在哪个城市？", "self.home"),
        Q("我还住在深圳吗？", "self.home"),
        Q("我在哪家公司上班？", "self.employer"),
        Q("我还在鲸鱼出行吗", "self.employer"),
        Q("我现在的女朋友是谁？", "self.partner"),
        Q("我养的是什么宠物？", "self.pet"),
        Q("我现在开什么车？", "self.car"),
        Q("我早上一般喝什么？", "self.drink"),
        Q("我最近在练什么运动？", "self.sport"),
        Q("小林现在在哪家公司？", "小林.employer"),
        Q("小林还在华为吗？", "小林.employer"),
        Q("我搬到珠海之前住在哪？", "self.home", kind="history", ask=2),
        Q("我之前养的是什么？", "self.pet", kind="history", ask=1),
        Q("我用的什么手机？", "self.phone", kind="none"),
        Q("我目前饮食上有什么讲究吗？", "self.diet", kind="none"),
    ],
)

# ---------------------------------------------------------------- u6: 刘婷 (Chinese)
PEOPLE["u6"] = dict(
    who="刘婷, 初中英语老师 -> 自由翻译 -> 翻译公司项目经理 (成都 -> 重庆 -> 成都)",
    lang="zh",
    values={
        "self.home": V([("成都", ["成都"]), ("重庆", ["重庆"]), ("成都", ["成都"])]),
        "self.job": V([("初中英语老师", ["英语老师"]), ("自由翻译", ["自由翻译"]), ("译桥翻译公司项目经理", ["译桥"])]),
        "self.pet": V([("金鱼", ["金鱼"]), ("没有（金鱼死了）", None), ("猫团子", ["团子"])]),
        "self.diet": V([("戒碳水", ["戒碳水"]), ("16:8 轻断食", ["轻断食"])]),
        "self.drink": V([("咖啡", ["咖啡"]), ("普洱", ["普洱"]), ("咖啡", ["咖啡"])]),
        "self.hobby": V([("古筝", ["古筝"]), ("陶艺", ["陶艺"])]),
        "self.health": V([("贫血", ["贫血"]), ("贫血好了（指标正常）", ["贫血", "正常"])]),
        "阿敏.home": V([("北京", ["北京"]), ("大理", ["大理"]), ("昆明", ["昆明"])]),
    },
    memories=[
        M("2024-02-03", "self.job:1", "开学第一周，嗓子已经哑了。当初中英语老师第六年，站上讲台还是会紧张。"),
        M("2024-02-17", "self.home:1", "成都的冬天阴冷阴冷的，在成都住了这么多年，还是受不了屋里没暖气。"),
        M("2024-03-02", "self.drink:1", "早上一杯手冲咖啡，不喝就撑不过早读课。"),
        M("2024-03-16", "self.diet:1", "开始戒碳水了，米饭面条全停，第一周饿得发慌。"),
        M("2024-03-30", "self.pet:1", "鱼缸里的两条金鱼今天换水，一条叫大橘一条叫小橘。"),
        M("2024-04-13", "self.hobby:1", "周末练了两个小时古筝，《渔舟唱晚》终于弹顺了。"),
        M("2024-04-27", "阿敏.home:1", "阿敏在北京，说最近沙尘暴，出门要戴护目镜。"),
        M("2024-05-11", "self.health:1", "体检查出来贫血，血红蛋白偏低，医生让我补铁。"),
        M("2024-05-25", "self.home~room", "书房改成了琴房，古筝终于有了自己的位置。"),
        M("2024-06-08", "self.home~other", "妈妈在乐山，说今年的荔枝特别甜，寄了一箱过来。"),
        M("2024-06-22", "self.home~plan", "陈默说他公司要调他去重庆，问我愿不愿意一起去。"),
        M("2024-07-06", "self.job~plan", "想辞职做全职翻译，试试自由职业。想了很久了。"),
        M("2024-07-20", "self.job~plan", "跟学校提了辞职，校长说随时欢迎回来。"),
        A("2024-08-03", "self.car~assistant", "作为AI，我不需要通勤，也没有车。如果你们搬到重庆，那边坡多路窄，买车前最好先试驾。"),
        M("2024-08-17", "", "暑假最后一个周末，和陈默去吃了冒菜，辣得满头汗。"),
        M("2024-09-07", "self.home:2", "搬到重庆了。新家在南岸，阳台能看到长江，就是上下楼全是坡。"),
        M("2024-09-21", "self.job:2", "正式开始做自由翻译，第一单是一份医疗器械说明书，三万字。"),
        M("2024-10-12", "", "这边的火锅比家里的还辣，陈默吃得直流眼泪。"),
        M("2024-10-26", "self.pet:2", "金鱼搬家的时候没挺过来，两条都走了。鱼缸空了，家里一只活物都没有。"),
        M("2024-11-16", "self.pet:3", "领养了一只三花猫，叫团子，胆子很小，躲在沙发底下一整天。"),
        M("2024-11-30", "self.car~other", "陈默买了辆二手大众朗逸，说在这边没车太不方便。"),
        M("2024-12-14", "阿敏.home:2", "阿敏搬去大理了，辞了北京的工作，说要开一家民宿。"),
        M("2025-01-11", "self.drink:2", "早上改喝普洱了，最近老心慌，医生让我少碰提神的东西。"),
        M("2025-01-25", "self.home~visit", "春节回乐山陪妈妈，顺路在成都待了两天，见了几个老同事。"),
        M("2025-02-22", "self.diet~pet", "团子换了新猫粮，终于不挑食了。"),
        M("2025-03-15", "self.car~plan", "打算明年买辆车，最好是电车。"),
        M("2025-04-05", "self.diet:2", "戒碳水坚持了一年，太难了，改成16:8轻断食，中午十二点到晚上八点吃饭。"),
        M("2025-04-26", "self.sport~other", "阿敏开始跑马拉松了，下个月要去跑大理的半马。"),
        M("2025-05-17", "self.job:2", "这个月接了四单自由翻译，有一单是游戏本地化，挺好玩。"),
        M("2025-06-07", "self.hobby:2", "好久没碰琴了，报了一个陶艺班，每周六下午拉坯。"),
        M("2025-06-28", "self.sport~plan", "打算报个游泳课，天太热了。先查查附近的游泳馆。"),
        M("2025-07-19", "self.sport~pet", "团子学会了在家里跑酷，从冰箱跳到衣柜顶上。"),
        M("2025-08-09", "self.health:2", "复查了，贫血已经好了，血红蛋白恢复正常。"),
        M("2025-08-30", "self.hobby:2", "陶艺课做了第一个杯子，歪的，但是能装水。"),
        M("2025-09-20", "self.home~plan", "陈默说项目结束了，可以申请调回成都。我们都想回去了。"),
        M("2025-10-18", "self.sport~visit", "国庆去三亚冲了两天浪，晒成了炭。"),
        M("2025-11-08", "self.home~plan", "成都的房子租好了，在温江，有个小院子。下个月底搬。"),
        M("2025-12-20", "self.home:2", "在重庆的最后一顿火锅，和楼里的邻居们告别，有点舍不得。"),
        M("2026-01-03", "self.home:3 self.pet:3", "搬回成都了！温江的小院子里种了一棵柠檬树，团子天天在院子里晒太阳。"),
        M("2026-01-17", "self.pet:3", "团子适应了新家，不再躲沙发底下了。"),
        M("2026-02-09", "self.job:3", "入职译桥翻译公司，做项目经理，管五个译员。不再单打独斗了。"),
        A("2026-02-21", "self.home~assistant", "你之前提到住在重庆南岸，周末去南山看夜景会很方便。"),
        M("2026-03-14", "阿敏.home:3", "阿敏又搬家了，从大理搬到了昆明，说大理游客太多。"),
        M("2026-04-04", "self.drink:3 self.home~return", "又回到咖啡了，普洱喝了一年多，还是咖啡香。"),
        M("2026-04-25", "self.home~room", "客厅刷成了奶油色，团子在新刷的墙上留了个爪印。"),
        M("2026-05-16", "self.diet:2", "还是16:8轻断食，一年多了，体重很稳定。"),
        M("2026-06-06", "self.job:3", "译桥接了个大项目，一百万字的技术文档，我们组忙疯了。"),
        M("2026-06-27", "阿敏.home~visit", "阿敏来成都出差，住在我家，在院子里喝了一晚上酒。"),
        M("2026-07-18", "self.hobby:2", "陶艺班升到了进阶班，开始学上釉。"),
        M("2026-08-08", "self.car~other", "陈默换了辆比亚迪海豹，朗逸卖了。"),
        M("2026-08-29", "self.home~other", "妈妈说想搬来成都跟我们住，我们还在商量。"),
        M("2026-09-19", "self.home:3 self.pet:3", "搬回成都后的第一个中秋，在院子里赏月，团子对着月亮叫了半天。"),
        M("2026-10-10", "self.drink:3", "咖啡豆又喝完了，这次买了云南的。"),
        M("2026-10-31", "阿敏.home:3", "住在昆明的阿敏寄来了一箱鲜花饼。"),
        M("2026-11-14", "", "降温了，晚上炖了一锅羊肉汤。"),
        A("2024-04-06", "self.diet~assistant", "作为AI我不用吃饭，谈不上饮食习惯。不过戒碳水的话，要注意蛋白质和蔬菜吃够。"),
        M("2024-10-19", "self.drink~other", "陈默每天早上只喝豆浆，说咖啡是苦水。"),
        M("2025-02-08", "self.hobby~other", "阿敏在大理学扎染，寄了一条蓝色的围巾给我。"),
        M("2025-03-29", "self.pet~other", "阿敏在民宿养了两只大白鹅，说比狗还凶。"),
        M("2025-05-03", "self.drink~visit", "五一去杭州玩，在龙井村住了三天，每天早上一杯龙井。"),
        M("2025-07-05", "self.job~other", "陈默升了部门经理，请我吃了顿大餐。"),
        M("2025-09-06", "self.health~other", "妈妈查出来高血压，每天要吃降压药了。"),
        M("2025-10-04", "self.pet~other", "妈妈家的狗生了一窝小狗，五只，全是黑白花的。"),
        M("2025-11-22", "self.diet~other", "陈默开始吃素了，说是为了降血脂，家里的菜单全改了。"),
        M("2025-12-06", "self.health~pet", "团子得了猫鼻支，打喷嚏打了一个星期，吃了药好多了。"),
        M("2026-09-05", "self.hobby~plan", "打算明年重新学古筝？想想而已，琴都送给表妹了。"),
        M("2026-10-24", "self.job~return self.home~return", "回到母校给师弟师妹讲了一堂翻译课，重新站上讲台的感觉又回来了。"),
    ],
    questions=[
        Q("我现在住哪？", "self.home"),
        Q("我还在重庆吗？", "self.home"),
        Q("我现在做什么工作？", "self.job"),
        Q("我还是自由翻译吗？", "self.job"),
        Q("我养的什么宠物", "self.pet"),
        Q("我现在的饮食习惯是什么？", "self.diet"),
        Q("我早上喝什么？", "self.drink"),
        Q("我目前的爱好是什么？", "self.hobby"),
        Q("我还贫血吗？", "self.health"),
        Q("阿敏现在住在哪个城市？", "阿敏.home"),
        Q("阿敏还在大理吗？", "阿敏.home"),
        Q("我搬回成都之前住在哪里？", "self.home", kind="history", ask=2),
        Q("我做翻译之前是做什么的？", "self.job", kind="history", ask=1),
        Q("我开什么车？", "self.car", kind="none"),
        Q("我现在做什么运动？", "self.sport", kind="none"),
    ],
)

# ---------------------------------------------------------------- u7: 赵一鸣 (Chinese)
PEOPLE["u7"] = dict(
    who="赵一鸣, 研究生 -> 自动驾驶算法工程师 (西安 -> 南京 -> 合肥)",
    lang="zh",
    values={
        "self.home": V([("西安", ["西安"]), ("南京", ["南京"]), ("合肥", ["合肥"])]),
        "self.employer": V([("西安交大（读研）", ["交大"]), ("云帆汽车", ["云帆"]), ("星途新能源", ["星途"])]),
        "self.partner": V([("单身", ["单身"]), ("安琪", ["安琪"])]),
        "self.phone": V([("小米13", ["小米13"]), ("华为 Mate 60", ["Mate 60"])]),
        "self.sport": V([("篮球", ["篮球"]), ("跑步", ["跑步"])]),
        "self.hobby": V([("摄影", ["摄影"]), ("钓鱼", ["钓"])]),
        "self.car": V([("二手 POLO", ["POLO"]), ("极氪 001", ["极氪"])]),
        "大刘.home": V([("西安", ["西安"]), ("北京", ["北京"]), ("杭州", ["杭州"])]),
    },
    memories=[
        M("2023-09-02", "self.employer:1", "研二开学，交大的实验室又要通宵跑仿真了。"),
        M("2023-09-16", "self.home:1", "在西安的第六年了，肉夹馍还是没吃腻。"),
        M("2023-09-30", "self.sport:1", "周末和大刘打了一下午篮球，他三分球比我准多了。"),
        M("2023-10-14", "self.phone:1", "小米13用了一年，拍照还行，就是打游戏发烫。"),
        M("2023-10-28", "self.hobby:1", "给实验室拍了一组秋天的照片，富士直出的色调真好看。摄影真是越玩越深。"),
        M("2023-11-11", "大刘.home:1", "室友大刘是西安本地人，说死也不离开西安。"),
        M("2023-11-25", "", "食堂的油泼面涨价了，八块了。"),
        M("2023-12-09", "self.pet~other", "合租的学长养了一只柯基，每天早上在我门口叫。"),
        M("2023-12-23", "self.pet~plan", "打算毕业后养只猫，橘猫，胖的那种。"),
        M("2024-01-13", "self.pet~visit self.home~visit", "寒假回宝鸡，家里的大黄又老了一点，见了我还是摇尾巴。"),
        M("2024-02-03", "self.home~other", "爸妈住在宝鸡，说等我工作了就去看我。"),
        M("2024-02-24", "", "改了一晚上论文格式，参考文献编号全乱了。"),
        M("2024-03-09", "self.employer~plan self.home~plan", "收到南京云帆汽车的 offer，做自动驾驶感知算法，七月入职。"),
        A("2024-03-23", "self.pet~assistant", "作为AI，我没有宠物。不过如果你毕业后想养猫，橘猫的性格通常很亲人。"),
        M("2024-04-13", "self.home~room", "宿舍阳台改成了暗房，冲了第一卷黑白胶片。"),
        M("2024-05-11", "self.sport:1", "篮球赛打进了院系决赛，可惜输了两分。"),
        M("2024-06-15", "self.employer:1", "答辩通过！交大的研究生生活就这样结束了。"),
        M("2024-07-06", "self.home:2", "搬到南京了，住进了江宁的一个单间，离公司骑车十五分钟。"),
        M("2024-07-13", "self.employer:2", "第一天到云帆汽车报到，领了工牌和一台很重的笔记本。"),
        M("2024-08-03", "大刘.home:2", "大刘去北京了，进了一家游戏公司。他说西安太小了，装不下他。"),
        M("2024-08-24", "", "这边的夏天比老家闷多了，出门五分钟就湿透。"),
        M("2024-09-14", "self.phone:2", "换了华为 Mate 60，信号好多了，地下车库也能打电话。"),
        M("2024-10-05", "self.home~visit 大刘.home:2", "国庆回西安，和大刘吃了顿泡馍，他特意从北京请假回来的。"),
        M("2024-10-19", "self.car:1", "买了辆二手 POLO，跑了八万公里，开着去上班。"),
        M("2024-11-09", "self.hobby:1", "带着相机去了紫金山，摄影一整天，拍了很多银杏。"),
        M("2024-11-30", "self.employer:2", "同事说云帆可能要被收购，大家人心惶惶。"),
        M("2024-12-21", "self.sport:1", "打篮球崴了脚，医生说至少一个月不能上场。"),
        M("2025-01-18", "self.sport:2", "脚好了以后开始跑步，每天早上绕着九龙湖跑五公里，篮球先不打了。"),
        M("2025-02-08", "self.partner:1 self.home~visit", "春节回宝鸡，妈妈问我什么时候找女朋友。还是单身。"),
        M("2025-03-08", "self.home~other", "妹妹一帆考上了南京大学的研究生，九月也要来南京了。"),
        M("2025-04-12", "self.partner:2 self.sport:2", "和安琪在一起了。她是隔壁组的测试工程师，我们是一起跑步认识的。"),
        M("2025-05-03", "self.pet~other", "安琪养了一只英短叫奶糖，第一次去她家，奶糖冲我哈气。"),
        M("2025-05-24", "self.diet~plan", "打算以后少点外卖，戒糖，先从奶茶开始戒。"),
        M("2025-06-14", "self.diet~other", "安琪在减脂，晚饭只吃鸡胸肉和西兰花，我陪她吃了一周。"),
        M("2025-07-05", "大刘.home:2", "大刘在北京又换工作了，不过还住在望京。"),
        M("2025-08-02", "self.home~room", "卧室装了遮光帘，终于能睡个好觉了。"),
        A("2025-08-30", "self.diet~assistant", "作为AI我不需要吃饭，谈不上饮食习惯。不过戒糖的话，可以先从含糖饮料开始。"),
        M("2025-09-20", "self.diet~pet", "奶糖换了处方粮，说是泌尿系统有点问题。"),
        M("2025-10-04", "self.home~return self.sport~visit", "又回到了老地方，交大的篮球场，和学弟们打了一场，腿跟不上了。"),
        M("2025-10-11", "self.home~plan", "安琪收到合肥一家新能源公司的面试，问我要不要一起去合肥。"),
        M("2025-11-01", "大刘.home~plan", "大刘说要从北京搬到杭州，女朋友在那边。"),
        M("2025-11-22", "大刘.home:3", "大刘已经在杭州安顿下来了，租在西湖边上，房租贵得离谱。"),
        M("2025-12-13", "self.employer~plan self.home~plan", "拿到星途新能源的 offer，在合肥，安琪也拿到了同一家。一起去。"),
        M("2026-01-10", "self.employer~plan", "从云帆离职，交接了三周，最后一天请组里吃了顿烤鸭。"),
        M("2026-02-07", "self.home:3 self.partner:2", "搬到合肥了，和安琪在滨湖租了个两居室。奶糖留在南京她爸妈家了。"),
        M("2026-02-21", "self.employer:3", "第一天去星途新能源上班，园区大得要开车进去。"),
        M("2026-03-14", "self.sport:2", "跑步换了路线，沿着巢湖边跑，风很大。"),
        M("2026-04-04", "self.hobby:2", "跟同事去巢湖钓鱼，钓到一条三斤的鲢鱼，上瘾了。相机已经落灰了。"),
        M("2026-05-09", "self.car:2", "把 POLO 卖了，提了一辆极氪 001，安琪说终于不用听发动机吼了。"),
        M("2026-05-30", "self.pet~plan", "打算养只猫，去宠物医院看了领养信息，还没决定。"),
        M("2026-06-20", "self.hobby:2", "周末去巢湖夜钓，带了帐篷，钓了一夜只钓到一条小鲫鱼。"),
        M("2026-07-11", "self.car:2 self.home~visit", "开极氪去黄山玩，安琪晕车晕了一路。"),
        M("2026-08-01", "self.employer:3", "星途的新车型发布，我们组的算法上了发布会PPT。"),
        M("2026-08-29", "self.pet~other", "妈妈说大黄走了，十四岁。心里空落落的。"),
        M("2026-09-19", "self.home~visit", "回了趟南京看一帆，在老公司楼下吃了碗鸭血粉丝。"),
        M("2026-10-10", "self.partner:2", "打算年底和安琪订婚，戒指已经在挑了。"),
        M("2026-10-31", "大刘.home:3", "大刘从杭州寄来一盒龙井，说杭州的秋天最好看。"),
        M("2026-11-14", "self.home:3", "来合肥快一年了，巢湖的风一刮起来，人都站不住。"),
        M("2024-12-07", "self.sport~other", "大刘在北京迷上了滑雪，每周末都去崇礼。"),
        A("2025-01-04", "self.partner~assistant", "作为AI我没有感情生活，不过如果你想认识新朋友，参加跑团是个不错的办法。"),
        M("2025-03-29", "self.car~other", "爸爸把老捷达卖了，换了一辆哈弗 H6。"),
        M("2025-07-19", "self.hobby~other", "安琪开始学烘焙，周末家里全是黄油味。"),
        M("2025-09-06", "self.phone~other", "安琪换了 iPhone 16，天天吐槽信号不好。"),
        M("2025-12-27", "self.car~plan", "打算明年换车，POLO 开到头了，在看电车。"),
        M("2026-01-24", "self.hobby~visit", "回西安收拾旧东西，翻出以前的胶片机，随手拍了一卷。"),
        M("2026-06-06", "self.partner~other", "大刘和女朋友在杭州领证了，发了好多照片。"),
        M("2026-07-25", "self.sport~plan", "打算报个游泳班，安琪说夏天不游泳太亏了。"),
        M("2026-09-05", "self.phone~plan", "打算换个折叠屏手机，还在看评测。"),
    ],
    questions=[
        Q("我现在在哪个城市？", "self.home"),
        Q("我还在南京吗", "self.home"),
        Q("我在哪上班？", "self.employer"),
        Q("我女朋友叫什么？", "self.partner"),
        Q("我还单身吗？", "self.partner"),
        Q("我用的什么手机", "self.phone"),
        Q("我最近在做什么运动？", "self.sport"),
        Q("我现在的爱好是什么？", "self.hobby"),
        Q("我开的什么车？", "self.car"),
        Q("大刘现在住哪？", "大刘.home"),
        Q("大刘还在北京吗？", "大刘.home"),
        Q("我来合肥之前在哪家公司？", "self.employer", kind="history", ask=2),
        Q("我之前开的什么车？", "self.car", kind="history", ask=1),
        Q("我养了什么宠物？", "self.pet", kind="none"),
        Q("我现在饮食上有什么讲究？", "self.diet", kind="none"),
    ],
)

# ---------------------------------------------------------------- u8: 陈乐 Leo (English + Chinese)
PEOPLE["u8"] = dict(
    who="陈乐 Leo Chen, game programmer (Vancouver -> 上海 -> Singapore), mixes English and Chinese",
    lang="mixed",
    values={
        "self.home": V([("Vancouver", ["Vancouver"]), ("上海", ["上海"]), ("Singapore", ["Singapore"])]),
        "self.employer": V([("Northpeak Games", ["Northpeak"]), ("星野游戏", ["星野"]), ("Tembusu Labs", ["Tembusu"])]),
        "self.partner": V([("Vivian", ["Vivian"]), ("single", ["single"])]),
        "self.pet": V([("Mochi (cat)", ["Mochi"]), ("no pet (Mochi stayed with Vivian)", None), ("Kaya (dog)", ["Kaya"])]),
        "self.drink": V([("oat latte", ["oat latte"]), ("豆浆", ["豆浆"]), ("kopi", ["kopi"])]),
        "self.sport": V([("badminton 羽毛球", ["羽毛球"]), ("bouldering", ["bouldering"])]),
        "self.phone": V([("Pixel 7", ["Pixel 7"]), ("小米 14", ["小米"])]),
        "Annie.home": V([("上海", ["上海"]), ("Sydney", ["Sydney"])]),
        "Vivian.home": V([("Vancouver", ["Vancouver"]), ("Toronto", ["Toronto"])]),
    },
    memories=[
        M("2023-01-07", "self.home:1", "住在 Vancouver 第四年了，又下了一整周的雨，I swear the sun is a myth here."),
        M("2023-01-21", "self.employer:1", "Northpeak Games 的 crunch 又开始了，这周每天十一点才下班。"),
        M("2023-02-04", "self.partner:1", "Vivian 做了一桌年夜饭，饺子包得比我妈还好。"),
        M("2023-02-18", "self.pet:1", "Mochi 把我的咖啡打翻在键盘上，键盘报废，猫毫发无损。"),
        M("2023-03-04", "self.drink:1", "每天早上一杯 oat latte from the café downstairs，不喝就写不了代码。"),
        M("2023-03-18", "self.sport:1", "Badminton night，和同事双打，smash 终于有点样子了。羽毛球 is life."),
        M("2023-04-01", "self.phone:1 self.pet:1", "Pixel 7 的夜景模式拍 Mochi 真的绝，黑猫都拍得清。"),
        M("2023-04-15", "Annie.home:1", "表姐 Annie 在上海，说上海的房租又涨了，她那个小开间快一万了。"),
        M("2023-04-29", "self.home:1 Vivian.home:1 self.partner:1", "Made hotpot at home with Vivian, the whole Vancouver apartment smells like 牛油 now."),
        M("2023-05-13", "self.home~plan", "Thinking of moving back to China? 爸妈年纪大了，想离他们近一点。Just thinking."),
        M("2023-05-27", "self.home~other", "爸妈住在杭州，老爸说他终于学会用微信视频了。"),
        M("2023-06-10", "self.home~room", "Painted the bedroom 雾蓝色，Vivian 说像住在云里。"),
        A("2023-06-24", "self.phone~assistant", "As an AI I don't have a phone of my own, but if you're choosing between a Pixel and a Xiaomi, the camera software is the biggest difference."),
        M("2023-07-08", "Vivian.home~plan", "Vivian 拿到了 Toronto 的 offer，但她说不想去。"),
        M("2023-07-22", "self.home~visit", "Long weekend in Whistler，骑车下山差点摔。"),
        M("2023-08-05", "self.car~other", "老爸换了辆比亚迪汉，天天发朋友圈。"),
        M("2023-08-19", "self.car~plan", "If I ever get a car 一定买电车，gas 太贵了。"),
        M("2023-09-16", "self.employer:1", "Northpeak 的新游戏 beta 上线了，Reddit 上骂的比夸的多。"),
        M("2023-10-14", "", "做了一锅红烧肉，Vivian 吃了三碗饭。"),
        M("2023-11-11", "", "双十一帮爸妈在淘宝抢了一台按摩椅。"),
        M("2023-12-09", "self.home~plan", "Vivian 和我谈了一晚上，她想留在加拿大，我想回国。没谈拢。"),
        M("2024-01-13", "self.employer~plan self.home~plan", "收到上海星野游戏的 offer，做 gameplay programmer lead。"),
        M("2024-02-03", "self.partner:2 self.pet:2", "和 Vivian 分手了。Mochi 跟她，她比我会照顾猫。I'm single again."),
        M("2024-02-24", "self.employer~plan", "Handed in my notice at Northpeak，老板居然说 'we'll miss you'。"),
        M("2024-03-16", "self.home:1", "最后一次在 Vancouver 的 Richmond 吃早茶，下个月就走了。"),
        M("2024-04-06", "self.home:2", "落地上海。新家在徐汇，a tiny studio with a huge window."),
        M("2024-04-15", "self.employer:2", "First day at 星野游戏，团队都好年轻，我是里面最老的。"),
        M("2024-05-04", "self.drink:2", "上海的早上没有 oat latte 的习惯了，改喝楼下的现磨豆浆，才三块钱。"),
        M("2024-05-18", "self.phone:2", "换了小米 14，国内用 Pixel 太折腾了。"),
        M("2024-06-08", "self.car~plan", "上海摇号又没中，算了，地铁够用。"),
        M("2024-06-29", "Annie.home~plan", "Annie 说想去 Sydney 读 MBA，问我意见。"),
        M("2024-07-20", "self.partner:2", "Single 的周末：一个人逛了一天武康路，拍了很多梧桐树。"),
        M("2024-08-10", "self.home~visit", "周末回杭州看爸妈，老妈做了一桌子菜。"),
        A("2024-09-07", "self.home~assistant", "You mentioned you live in Vancouver, so for the long weekend a ferry to Victoria could be a nice trip."),
        M("2024-10-12", "self.sport:1", "羽毛球在上海找到了一个球友群，每周四晚上打。"),
        M("2024-11-09", "self.employer:2", "星野游戏的新项目立项了，我带一个八个人的小组。"),
        M("2024-12-14", "self.diet~other", "Annie 开始吃素了，说是为了身体。每次约饭都得找素食馆。"),
        M("2025-01-11", "Vivian.home:2 self.pet~other", "Vivian 搬去 Toronto 了，Mochi 也跟着去了。她发了张 Mochi 看雪的照片。"),
        M("2025-02-08", "self.diet~plan", "Thinking of trying intermittent fasting? 同事都在搞 16:8。"),
        M("2025-03-01", "Annie.home:2", "Annie 去 Sydney 了！MBA 开学，她说 Sydney 的海太美了。"),
        M("2025-03-22", "", "加班到凌晨两点，打车回家的路上看到外滩的灯还亮着。"),
        M("2025-04-19", "self.employer~plan self.home~plan", "Tembusu Labs 在 Singapore 找我聊，做 AI game tools。心动了。"),
        M("2025-05-17", "self.employer~plan self.home~plan", "Accepted the Tembusu Labs offer。八月搬去 Singapore。"),
        M("2025-06-14", "self.employer~plan", "跟星野提了离职，项目交接给了小吴。"),
        M("2025-07-12", "self.home:2", "在上海的最后一个月，把 studio 里的东西卖得差不多了。"),
        M("2025-08-09", "self.home:3", "Moved to Singapore！租的 HDB 房间在 Tiong Bahru，热到怀疑人生。"),
        M("2025-08-18", "self.employer:3", "First day at Tembusu Labs. 办公室冷气开到 18 度，要带外套。"),
        M("2025-09-06", "self.drink:3", "早上改喝 kopi 了，楼下 kopitiam 一杯 kopi C 才一块六。"),
        M("2025-10-04", "self.sport:2", "Tried bouldering with 同事，手指都磨破了，but I'm hooked. 羽毛球 can wait."),
        M("2025-11-01", "Annie.home:2", "Annie 在 Sydney 找到工作了，准备留下来。"),
        M("2025-12-06", "self.pet:3", "领养了一只 Singapore Special 小狗，叫 Kaya，黄色的，特别黏人。"),
        M("2026-01-10", "self.diet~pet", "Kaya 换了新狗粮，说是对皮肤好。"),
        M("2026-02-07", "self.car~plan", "COE 太贵了，在这边买车 basically 不可能。Grab 就行。"),
        M("2026-02-21", "self.home~visit self.pet:3", "Chinese New Year 回杭州，爸妈看了 Kaya 的照片就说要飞过来看狗。"),
        M("2026-03-14", "self.sport:2", "Bouldering 一周三次，终于 send 了第一条 V4。"),
        M("2026-04-04", "self.home~room self.pet:3", "房间的角落改成了 Kaya 的窝，铺了凉垫。"),
        A("2026-05-02", "self.pet~assistant", "我没有宠物，as an AI 也不需要吃饭。不过像 Kaya 这样的 Singapore Special 一般都很好养。"),
        M("2026-05-30", "self.drink:3", "Kopi C kosong 已经是我早上的标配了，不加糖。"),
        M("2026-06-20", "self.phone:2", "小米 14 掉进了泳池，救回来了，continue using."),
        M("2026-07-11", "self.home~visit self.employer~visit", "Back to Shanghai for a week，去星野看了老同事，吃了生煎。"),
        M("2026-08-08", "Vivian.home:2 self.partner~other", "Vivian 在 Toronto 订婚了。Good for her, really."),
        M("2026-08-29", "self.employer:3", "Tembusu Labs 融到了 A 轮，大家开香槟。"),
        M("2026-09-19", "self.home:3", "住在 Singapore 一年多了，已经习惯每天下午的暴雨。"),
        M("2026-10-10", "self.sport:2 self.home~return", "Went back to badminton for one night with 老同事，结果第二天手臂废了。Bouldering 还是我的主业。"),
        M("2026-10-31", "", "Deepavali 放假，去 Little India 吃了一顿 banana leaf rice。"),
        M("2026-11-14", "self.partner:2 self.pet:3", "Single 也挺好的，周末和 Kaya 去 East Coast Park 散步。"),
        M("2024-12-28", "self.phone~other", "老爸换了华为 Mate 60，天天给我发他拍的夕阳。"),
        M("2025-06-07", "self.drink~other", "Annie 说 Sydney 每个人早上都要一杯 flat white，她也入乡随俗了。"),
        M("2025-10-25", "self.drink~visit", "出差去 Jakarta，酒店早上只有 instant coffee，好想念楼下的 kopi。"),
        M("2025-12-20", "self.sport~other", "Annie 在 Sydney 开始学冲浪了，摔了一个月还没站起来。"),
        M("2026-03-28", "self.partner~other", "Annie 和她的澳洲男朋友订婚了，明年在 Sydney 办婚礼。"),
        M("2026-06-06", "self.sport~plan", "Thinking of learning to dive in Tioman next year. 先考个证再说。"),
    ],
    questions=[
        Q("Where do I live now?", "self.home", lang="en"),
        Q("我现在住在哪个城市？", "self.home", lang="zh"),
        Q("Who do I work for?", "self.employer", lang="en"),
        Q("我还在星野游戏上班吗？", "self.employer", lang="zh"),
        Q("Am I still with Vivian?", "self.partner", lang="en"),
        Q("我养了什么宠物？", "self.pet", lang="zh"),
        Q("What do I drink in the mornings these days?", "self.drink", lang="en"),
        Q("我现在玩什么运动？", "self.sport", lang="zh"),
        Q("What phone am I using?", "self.phone", lang="en"),
        Q("Where does Annie live now?", "Annie.home", lang="en"),
        Q("Vivian 现在住在哪？", "Vivian.home", lang="zh"),
        Q("Where did I live before Singapore?", "self.home", kind="history", ask=2, lang="en"),
        Q("我以前养的猫叫什么？", "self.pet", kind="history", ask=1, lang="zh"),
        Q("What car do I drive now?", "self.car", kind="none", lang="en"),
        Q("我现在饮食上有什么讲究？", "self.diet", kind="none", lang="zh"),
    ],
)


# ---------------------------------------------------------------- build
LABEL_RE = re.compile(r"^(?P<subj>[^.~:]+)\.(?P<attr>[a-z]+)(?::(?P<n>\d+)|~(?P<kind>[a-z]+))$")
KINDS = ["room", "plan", "other", "pet", "visit", "return", "assistant", "named", "past"]


def parse(labels):
    out = []
    for lab in labels.split():
        m = LABEL_RE.match(lab)
        if not m:
            sys.exit(f"bad label {lab!r}")
        out.append((m["subj"], m["attr"], int(m["n"]) if m["n"] else None, m["kind"]))
    return out


def build():
    memories, questions = [], []
    for person, spec in PEOPLE.items():
        rng = random.Random(person)
        mems = sorted(spec["memories"], key=lambda m: m[0])
        dates = [m[0] for m in mems]
        if len(set(dates)) != len(dates):
            sys.exit(f"{person}: two memories share a date")
        rows = []
        for i, (date, labels, content, role) in enumerate(mems, 1):
            mid = f"{person}-{i:03d}"
            t = f"{date}T{rng.randint(6, 22):02d}:{rng.randint(0, 59):02d}:00Z"
            labs = parse(labels)
            if role == "assistant":
                for _subj, _attr, n, kind in labs:
                    if n is not None or kind != "assistant":
                        sys.exit(f"{mid}: assistant memories carry only ~assistant labels")
            rows.append(dict(id=mid, labels=labs, role=role))
            memories.append({"person": person, "id": mid, "content": content, "created_at": t, "role": role})
        spec["_rows"] = rows
        spec["_mem"] = {m["id"]: m for m in memories if m["person"] == person}
        for (subj_attr, vals) in spec["values"].items():
            subj, attr = subj_attr.split(".")
            ns = [n for r in rows for s, a, n, k in r["labels"] if s == subj and a == attr and n]
            if sorted(set(ns)) != list(range(1, len(vals) + 1)):
                sys.exit(f"{person} {subj_attr}: values stated {sorted(set(ns))}, declared {len(vals)}")
            # states must be in time order
            last = 0
            for r in rows:
                for s, a, n, _k in r["labels"]:
                    if s == subj and a == attr and n:
                        if n < last:
                            sys.exit(f"{person} {r['id']} {subj_attr}: value {n} after value {last}")
                        last = n
        for q in spec["questions"]:
            subj, attr = q["key"].split(".")
            kind = q["kind"]
            state = defaultdict(list)
            distract = []
            for r in rows:
                own_state = any(s == subj and a == attr and n for s, a, n, k in r["labels"])
                for s, a, n, k in r["labels"]:
                    if a != attr:
                        continue
                    if s == subj and n:
                        state[n].append(r["id"])
                    elif own_state:
                        continue
                    elif s == subj and k:
                        distract.append(r["id"])
                    elif s != subj and n:
                        distract.append(r["id"])      # another person's value of the same attribute
                    elif s != subj and k and subj == "self" and s != "self":
                        distract.append(r["id"])      # a named person's plan / visit etc.
            distract = sorted(set(distract))
            out = {"person": person, "language": q["lang"] or spec["lang"], "question": q["text"],
                   "attribute": ATTR_LABEL[attr], "subject": subj}
            if kind == "none":
                if state:
                    sys.exit(f"{person} none question {q['text']!r} but states exist")
                out.update(current=[], history=[], current_ids=[], stale_ids=[])
            else:
                vals = spec["values"][q["key"]]
                top = len(vals)
                hist = []
                for d, _ in vals:
                    if not hist or hist[-1] != d:
                        hist.append(d)
                ask = top if kind == "current" else q["ask"]
                kw = vals[ask - 1][1]
                if not kw:
                    sys.exit(f"{person} {q['text']!r}: value {ask} has no keywords")
                out.update(current=kw, history=hist, current_ids=state[top],
                           stale_ids=sorted(i for n in range(1, top) for i in state[n]))
            out.update(distractor_ids=distract, as_of=AS_OF, kind=kind)
            if kind == "history":
                out["answer_ids"] = state[q["ask"]]
            questions.append(out)
    return memories, questions


def kind_counts():
    """distractor memories per kind and language group (a memory counts once per kind)."""
    counts = defaultdict(lambda: defaultdict(int))
    for _person, spec in PEOPLE.items():
        for r in spec["_rows"]:
            kinds = set()
            for s, _a, _n, k in r["labels"]:
                if k:
                    kinds.add(k)
                elif s != "self":
                    kinds.add("named")
            grp = {"en": "en", "zh": "zh", "mixed": "mixed"}[spec["lang"]]
            for k in kinds:
                counts[k][grp] += 1
    return counts


if __name__ == "__main__":
    mems, qs = build()
    with open(os.path.join(HERE, "memories.jsonl"), "w", encoding="utf-8") as f:
        for m in mems:
            f.write(json.dumps(m, ensure_ascii=False) + "\n")
    with open(os.path.join(HERE, "questions.jsonl"), "w", encoding="utf-8") as f:
        for q in qs:
            f.write(json.dumps(q, ensure_ascii=False) + "\n")
    print(len(mems), "memories,", len(qs), "questions")
    for p, spec in PEOPLE.items():
        ds = [m[0] for m in spec["memories"]]
        print(p, len(spec["memories"]), "memories", min(ds), "->", max(ds),
              sum(1 for m in spec["memories"] if m[3] == "assistant"), "assistant")
    for k, v in sorted(kind_counts().items()):
        print(f"{k:10s}", dict(v), sum(v.values()))
    from collections import Counter
    print(Counter(q["kind"] for q in qs), Counter(q["language"] for q in qs),
          Counter(q["subject"] != "self" for q in qs))
