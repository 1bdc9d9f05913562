"""Words that differ between a question and the text that answers it.

- A kind and its instances: "What sports does she do?" is answered by "went on a hike". The
  table below is the project's own (written for pcp, same licence as the code; no list was copied),
  small on purpose: the common kinds of things in a personal history (sports, food, pets, family,
  jobs, places, illnesses, hobbies, music, films and books). A question's kind word also looks for its
  instances, at a lower weight; an instance never looks for its kind (that would drown it).
- British and American spellings ("colour"/"color", "organise"/"organize", "theatre"/"theater"):
  a question in either spelling looks for both, at full weight.

Everything here is a constant of the code: nothing is downloaded, nothing learnt from a store.
"""

from __future__ import annotations

# kind word (as a person asks) -> instances (as a person tells); several kind words may share a list.
_KINDS: dict[str, str] = {
    "sport sports athletics workout exercise": (
        "football soccer basketball baseball volleyball tennis golf hockey rugby cricket swimming swim running run "
        "marathon jogging cycling biking bike hiking hike climbing surfing surf skiing ski snowboarding skating yoga "
        "pilates boxing karate judo taekwondo wrestling rowing kayaking gym lifting badminton archery fencing"),
    "martial": "karate judo taekwondo kickboxing boxing jiujitsu kungfu aikido wrestling",
    "outdoor outdoors nature": (
        "hiking hike camping camp trail park beach lake mountain mountains forest kayaking fishing surfing "
        "climbing garden gardening picnic waterfall"),
    "food foods dish dishes meal meals cuisine recipe recipes snack snacks dessert desserts": (
        "pizza pasta sushi burger burgers salad soup cake cookies cookie pie bread chicken steak tacos curry rice "
        "noodles sandwich sandwiches icecream chocolate pancakes tart muffins cupcakes barbecue bbq stew"),
    "drink drinks beverage": "coffee tea juice wine beer smoothie soda lemonade cocktail milk",
    "pet pets animal animals": (
        "dog dogs puppy puppies cat cats kitten kittens turtle turtles fish hamster rabbit bunny parrot bird "
        "birds snake lizard guinea horse pony"),
    "family relative relatives": (
        "mom mother dad father parents sister brother siblings son daughter kids children child husband wife "
        "grandma grandmother grandpa grandfather aunt uncle cousin niece nephew"),
    "children kids child": "son daughter sons daughters baby toddler",
    "job jobs career profession work occupation": (
        "teacher nurse doctor engineer developer programmer lawyer accountant banker manager designer writer "
        "artist chef cook counselor therapist volunteer intern internship barista cashier driver mechanic "
        "firefighter police officer soldier scientist researcher consultant musician photographer"),
    "place places city cities country countries": (
        "paris london tokyo rome berlin madrid barcelona amsterdam york chicago boston seattle "
        "france spain italy germany england uk britain ireland japan china canada mexico brazil india "
        "australia greece portugal sweden norway thailand vietnam korea"),
    "state states": (
        "california texas florida york washington oregon nevada arizona colorado utah montana michigan ohio "
        "illinois georgia carolina tennessee virginia massachusetts jersey pennsylvania alaska hawaii maine "
        "vermont minnesota wisconsin indiana iowa kansas kentucky louisiana"),
    "illness illnesses disease diseases sickness condition health injury injuries problem problems": (
        "flu cold fever cancer diabetes asthma allergy allergies allergic migraine headache injury injured "
        "surgery broken sprained fracture depression anxiety covid infection pain hospital"),
    "hobby hobbies activity activities pastime interests": (
        "painting drawing reading writing photography gardening cooking baking knitting pottery hiking "
        "camping fishing dancing singing gaming chess piano guitar yoga running swimming volunteering"),
    "instrument instruments": "piano guitar violin drums flute cello saxophone trumpet ukulele clarinet harp",
    "music song songs band bands artist artists concert": (
        "pop rock jazz classical hiphop rap country folk blues metal album guitar piano"),
    "genre genres": (
        "fantasy scifi sci fi drama romance comedy horror thriller mystery action documentary animation "
        "romantic crime adventure"),
    "movie movies film films show shows series": "watched cinema theater theatre netflix episode trilogy",
    "book books novel novels reading": "read novel author series chapter story stories library",
    "game games gaming": "played playing tournament console xbox playstation nintendo rpg chess",
}

# British spelling -> American spelling (the question may use either).
_SPELLINGS = """colour color|favourite favorite|favour favor|honour honor|humour humor|labour labor|neighbour neighbor|
behaviour behavior|flavour flavor|harbour harbor|rumour rumor|organise organize|organisation organization|
realise realize|recognise recognize|apologise apologize|travelled traveled|travelling traveling|
cancelled canceled|theatre theater|centre center|metre meter|litre liter|fibre fiber|defence defense|
licence license|practise practice|programme program|catalogue catalog|dialogue dialog|grey gray|
jewellery jewelry|mum mom|aeroplane airplane|tyre tire|pyjamas pajamas|cheque check|mould mold|
analyse analyze|paralyse paralyze|ageing aging|judgement judgment|enrol enroll|fulfil fulfill|skilful skillful|
impostor imposter|adviser advisor|whisky whiskey|doughnut donut|yoghurt yogurt|moustache mustache|
sceptical skeptical|plough plow|counsellor counselor|counselling counseling|modelling modeling"""

KINDS: dict[str, tuple[str, ...]] = {}
for _kinds, _instances in _KINDS.items():
    for _kind in _kinds.split():
        KINDS[_kind] = tuple(dict.fromkeys((*KINDS.get(_kind, ()), *_instances.split())))

SPELLINGS: dict[str, str] = {}
for _pair in _SPELLINGS.replace("\n", "").split("|"):
    _a, _b = _pair.split()
    SPELLINGS[_a] = _b
    SPELLINGS[_b] = _a
