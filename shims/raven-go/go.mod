module github.com/getsentry/raven-go

go 1.26
