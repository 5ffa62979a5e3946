// Package dashboard serves the fleet dashboard on a node's admin surface (pace-node §10.3):
// /fleet (HTML rendered on the server, with an embedded stylesheet and a small script that
// draws the history charts), /fleet.json, /fleet.txt (tab-separated, one section or all) and
// /fleet/series.json. Only the leader answers; a follower answers 503 naming the leader. Every
// route needs the dashboard token when one is configured.
//
// The package reads the node through Source: who leads, the facts the tables are built from
// (Build turns them into the Model, without I/O), and the chart series.
package dashboard
