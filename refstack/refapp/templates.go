package refapp

import (
	"html/template"
	"time"
)

// The pages. Every block a scenario may check has a stable id or class:
// see the package documentation for the list.
const pageTemplates = `
{{define "head"}}<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{{.}} - refapp</title></head>
<body>
<nav id="nav"><a href="/">home</a> <a href="/friends">friends</a> <a href="/footprints">footprints</a></nav>
{{end}}
{{define "foot"}}</body></html>
{{end}}

{{define "login"}}{{template "head" "login"}}
<h1 id="login-title">Please log in</h1>
{{if .}}<p id="login-error">{{.}}</p>{{end}}
<form id="login-form" method="post" action="/login">
<input type="text" name="email"> <input type="password" name="password"> <input type="submit" value="login">
</form>
{{template "foot"}}{{end}}

{{define "user"}}<a class="user" href="/profile/{{.AccountName}}">{{.NickName}}</a>{{end}}

{{define "index"}}{{template "head" "home"}}
<h1 id="welcome">Welcome, {{.User.NickName}}</h1>
<section id="profile">
<dl>
<dt>account</dt><dd id="prof-account-name">{{.User.AccountName}}</dd>
<dt>name</dt><dd id="prof-name">{{.Profile.FirstName}} {{.Profile.LastName}}</dd>
<dt>sex</dt><dd id="prof-sex">{{.Profile.Sex}}</dd>
<dt>birthday</dt><dd id="prof-birthday">{{date .Profile.Birthday}}</dd>
<dt>prefecture</dt><dd id="prof-pref">{{.Profile.Pref}}</dd>
<dt>friends</dt><dd id="friends-count">{{.Friends}}</dd>
</dl>
</section>
<section><h2>Your entries</h2><ul id="entries">
{{range .Entries}}<li class="entry"><a class="entry-title" href="/diary/entry/{{.ID}}">{{.Title}}</a> <span class="created-at">{{datetime .CreatedAt}}</span></li>
{{end}}</ul></section>
<section><h2>Comments for you</h2><ul id="comments-for-me">
{{range .CommentsForMe}}<li class="comment-for-me">{{template "user" .Author}}: <span class="comment-body">{{.Comment}}</span></li>
{{end}}</ul></section>
<section><h2>Your friends' entries</h2><ul id="friend-entries">
{{range .FriendEntries}}<li class="friend-entry">{{template "user" .Author}} <a class="entry-title" href="/diary/entry/{{.ID}}">{{.Title}}</a> <span class="created-at">{{datetime .CreatedAt}}</span></li>
{{end}}</ul></section>
<section><h2>Your friends' comments</h2><ul id="friend-comments">
{{range .FriendComments}}<li class="friend-comment">{{template "user" .Author}} on <a href="/diary/entry/{{.EntryID}}">{{.EntryOwner.NickName}}'s entry</a>: <span class="comment-body">{{.Comment}}</span></li>
{{end}}</ul></section>
<section><h2>Footprints</h2><ul id="footprints">
{{range .Footprints}}<li class="footprint">{{template "user" .Owner}} <span class="updated">{{datetime .Updated}}</span></li>
{{end}}</ul></section>
{{template "foot"}}{{end}}

{{define "profile"}}{{template "head" .Owner.AccountName}}
<section id="profile">
<h1 id="profile-nick-name">{{.Owner.NickName}}</h1>
<dl>
<dt>account</dt><dd id="profile-account-name">{{.Owner.AccountName}}</dd>
<dt>name</dt><dd id="profile-name">{{.Profile.FirstName}} {{.Profile.LastName}}</dd>
<dt>prefecture</dt><dd id="profile-pref">{{.Profile.Pref}}</dd>
<dt>friend</dt><dd id="profile-friend">{{if .IsFriend}}yes{{else}}no{{end}}</dd>
</dl>
</section>
<section><h2>Entries</h2><ul id="profile-entries">
{{range .Entries}}<li class="entry"><a class="entry-title" href="/diary/entry/{{.ID}}">{{.Title}}</a>{{if .Private}} <span class="private">private</span>{{end}}</li>
{{end}}</ul><a id="diary-link" href="/diary/entries/{{.Owner.AccountName}}">all entries</a></section>
{{template "foot"}}{{end}}

{{define "entries"}}{{template "head" "entries"}}
<h1 id="diary-owner">{{.Owner.NickName}}'s diary</h1>
<div id="diary-entries">
{{range .Entries}}<article class="entry" id="entry-{{.ID}}"><h2 class="entry-title"><a href="/diary/entry/{{.ID}}">{{.Title}}</a></h2>
<div class="entry-body">{{.Body}}</div><p class="entry-comments">comments: <span class="comment-count">{{.Comments}}</span></p></article>
{{end}}</div>
{{template "foot"}}{{end}}

{{define "entry"}}{{template "head" .Entry.Title}}
<article id="entry">
<h1 id="entry-title">{{.Entry.Title}}</h1>
<p id="entry-owner">{{template "user" .Owner}}</p>
<div id="entry-body">{{.Entry.Body}}</div>
<p id="entry-created-at">{{datetime .Entry.CreatedAt}}</p>
</article>
<section><h2>Comments</h2><ul id="entry-comments">
{{range .Comments}}<li class="comment" id="comment-{{.ID}}">{{template "user" .Author}}: <span class="comment-body">{{.Comment}}</span> <span class="created-at">{{datetime .CreatedAt}}</span></li>
{{end}}</ul>
<form id="comment-form" method="post" action="/diary/comment/{{.Entry.ID}}"><textarea name="comment"></textarea><input type="submit" value="comment"></form>
</section>
{{template "foot"}}{{end}}

{{define "footprints"}}{{template "head" "footprints"}}
<h1 id="footprints-title">Footprints</h1>
<ul id="footprints">
{{range .}}<li class="footprint">{{template "user" .Owner}} <span class="updated">{{datetime .Updated}}</span></li>
{{end}}</ul>
{{template "foot"}}{{end}}

{{define "friends"}}{{template "head" "friends"}}
<h1 id="friends-title">Friends</h1>
<ul id="friends">
{{range .}}<li class="friend">{{template "user" .User}} <span class="since">{{datetime .CreatedAt}}</span></li>
{{end}}</ul>
{{template "foot"}}{{end}}
`

var pages = template.Must(template.New("refapp").Funcs(template.FuncMap{
	"date":     func(t time.Time) string { return t.Format(time.DateOnly) },
	"datetime": func(t time.Time) string { return t.Format(time.DateTime) },
}).Parse(pageTemplates))
