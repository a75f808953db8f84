module github.com/jdf2go/jdf2go

go 1.25.0

require (
	github.com/alecthomas/participle/v2 v2.1.4
	github.com/dave/jennifer v1.7.1
	github.com/ebitengine/purego v0.11.3
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.0.9
	gonum.org/v1/gonum v0.17.0
)

require github.com/inconshreveable/mousetrap v1.1.0 // indirect
