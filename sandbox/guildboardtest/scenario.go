package guildboardtest

import (
	"fmt"
	"strings"
)

// Logins are the players the scenario's virtual users log in as (one per
// user, in turn).
var Logins = []string{"player-00001", "player-00002", "player-00003", "player-00004", "player-00005", "player-00006", "player-00007", "player-00008"}

// ScenarioText is the scenario of the stack at base (the URL, no trailing
// slash): POST /initialize before each run (quick once the data is
// loaded: it deletes the posts a run added), a login per virtual user, and
// every page by weight, each step checking its page's content: the board's
// 1000 posts, the members page's 150 members, the stats page's 20 top
// posters, an inventory's items, the ranking's first player (top, as
// Stack.TopRanked computes it; with "" only the heading is checked) and a
// post's confirmation.
func ScenarioText(base, top string) string {
	ranking := `contains: 'id="ranking"'`
	if top != "" {
		ranking = fmt.Sprintf(`contains: 'data-top="%s"'`, top)
	}
	return fmt.Sprintf(`name: guildboard
base_url: %s
data:
  players: [%s]
pre_run:
  method: POST
  url: /initialize
  expect: {status: 200, contains: '"language":"php"'}
  timeout: 5m
session:
  login:
    url: /login
    form: {name: "{{players}}"}
    expect: {status: 303}
steps:
  - name: home
    weight: 1
    url: /
    expect: {status: 200, selector: "#guilds li", min_count: 20}
  - name: board
    weight: 2
    url: /guilds/{{rand 1 %d}}/board
    expect: {status: 200, contains: 'data-posts="%d"', selector: "#posts li.post", min_count: %d}
  - name: members
    weight: 3
    url: /guilds/{{rand 1 %d}}/members
    expect: {status: 200, contains: 'data-members="%d"', selector: "li.member", min_count: %d}
  - name: stats
    weight: 2
    url: /guilds/{{rand 1 %d}}/stats
    expect: {status: 200, contains: 'data-posters="%d"', selector: "#rank"}
  - name: inventory
    weight: 3
    url: /players/{{rand 1 %d}}/inventory
    expect: {status: 200, selector: "#inventory li.item", min_count: 12}
  - name: ranking
    weight: 2
    url: /ranking
    expect: {status: 200, %s}
  - name: post
    weight: 1
    method: POST
    url: /posts
    form: {body: "gg {{rand 1 1000}}"}
    expect: {status: 201, selector: "#posted"}
`, base, strings.Join(Logins, ", "),
		Guilds, BoardPosts, BoardPosts,
		Guilds, MembersShown, MembersShown,
		Guilds, TopPosters,
		Players, ranking)
}
