package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/pgstore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/sqlitestore"
)

// The export and import commands: a tenant's state as one document, from and into a running
// simulator (through the client), or from and into a store directly (--db FILE of a stopped
// simulator, or --postgres URL), through an engine over it that serves nothing.

// stateFlags are the flags of export and import.
type stateFlags struct {
	tenant, out, db, postgres, kinds string
}

// stateCommand declares the flags of export or import on fs.
func stateCommand(fs *flag.FlagSet, name string, stdin io.Reader) func(ctx context.Context, c *client.Client, p printer, args []string) error {
	f := &stateFlags{}
	fs.StringVar(&f.tenant, "tenant", "", "the `tenant`: with the admin token, the one to "+name+"; with --db or --postgres, the store's tenant (the open simulator's is \"\")")
	if name == "export" {
		fs.StringVar(&f.out, "out", "", "write the document to this `file` (default: standard output)")
	}
	fs.StringVar(&f.db, "db", "", "work on this SQLite `file` (of a stopped lifecyclesim) instead of a running simulator")
	fs.StringVar(&f.postgres, "postgres", "", "work on this PostgreSQL `URL` instead of a running simulator")
	fs.StringVar(&f.kinds, "kinds", "", "with --db or --postgres: YAML `file` of the user-defined kinds the objects are of")
	return func(ctx context.Context, c *client.Client, p printer, args []string) error {
		if name == "export" {
			if err := wantArgs(args, 0, "no arguments (--out FILE names the file)"); err != nil {
				return err
			}
			return f.export(ctx, c, p)
		}
		if err := wantArgs(args, 1, "the document's FILE (- for standard input)"); err != nil {
			return err
		}
		return f.importFile(ctx, c, p, args[0], stdin)
	}
}

func (f *stateFlags) export(ctx context.Context, c *client.Client, p printer) error {
	var doc []byte
	if f.db != "" || f.postgres != "" {
		eng, done, err := f.openEngine(ctx)
		if err != nil {
			return err
		}
		defer done()
		st, err := eng.Export(ctx, f.tenant)
		if err != nil {
			return errors.New(engine.AsError(err).Message)
		}
		if doc, err = json.Marshal(st); err != nil {
			return err
		}
	} else {
		var err error
		if doc, err = c.ExportState(ctx, f.tenant); err != nil {
			return err
		}
	}
	doc = append(doc, '\n')
	if f.out == "" {
		_, err := p.w.Write(doc)
		return err
	}
	if err := os.WriteFile(f.out, doc, 0o644); err != nil {
		return fmt.Errorf("write the document: %w", err)
	}
	return p.print(map[string]any{"file": f.out, "bytes": len(doc)}, []string{"FILE", "BYTES"}, [][]string{{f.out, strconv.Itoa(len(doc))}})
}

func (f *stateFlags) importFile(ctx context.Context, c *client.Client, p printer, file string, stdin io.Reader) error {
	var doc []byte
	var err error
	if file == "-" {
		doc, err = io.ReadAll(io.LimitReader(stdin, client.MaxStateBytes+1))
	} else {
		doc, err = os.ReadFile(file)
	}
	if err != nil {
		return fmt.Errorf("read the document: %w", err)
	}
	if len(doc) > client.MaxStateBytes {
		return fmt.Errorf("the document is over %d bytes", client.MaxStateBytes)
	}
	var res *client.ImportResult
	if f.db != "" || f.postgres != "" {
		res, err = f.importStore(ctx, doc)
	} else {
		res, err = c.ImportState(ctx, f.tenant, doc)
	}
	if err != nil {
		return err
	}
	return p.print(res, []string{"TENANT", "OBJECTS", "EVENTS", "FAULT_RULES", "CLOCK"}, [][]string{{res.Tenant, strconv.Itoa(res.Objects),
		strconv.Itoa(res.Events), strconv.Itoa(res.FaultRules), res.Clock.UTC().Format(time.RFC3339Nano)}})
}

// importStore imports a document into the store: the operator owns it, so a clock behind the
// document's is advanced.
func (f *stateFlags) importStore(ctx context.Context, doc []byte) (*client.ImportResult, error) {
	var st engine.State
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		return nil, fmt.Errorf("the document is not a lifecyclesim export: %w", err)
	}
	eng, done, err := f.openEngine(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	if err := eng.Import(ctx, f.tenant, &st, engine.ImportOptions{AdvanceClock: true}); err != nil {
		return nil, errors.New(engine.AsError(err).Message)
	}
	return &client.ImportResult{Tenant: f.tenant, Objects: len(st.Objects), Events: len(st.Events), FaultRules: len(st.FaultRules),
		Clock: eng.Clock().Now()}, nil
}

// openEngine opens the store the flags name, and an engine over it with its saved clock and
// (on PostgreSQL) fault rules; done closes the store.
func (f *stateFlags) openEngine(ctx context.Context) (*engine.Engine, func(), error) {
	if f.db != "" && f.postgres != "" {
		return nil, nil, errors.New("--db and --postgres name two stores: give one")
	}
	reg := lifecycle.Builtin()
	if f.kinds != "" {
		if _, err := reg.LoadFiles(f.kinds); err != nil {
			return nil, nil, fmt.Errorf("%s: %w (lifecyclesim check %s lists every problem)", f.kinds, err, f.kinds)
		}
	}
	var st store.Store
	var err error
	if f.postgres != "" {
		st, err = pgstore.Open(ctx, f.postgres)
	} else {
		st, err = sqlitestore.Open(ctx, f.db)
	}
	if err != nil {
		return nil, nil, err
	}
	eng := engine.New(st, reg, engine.NewSimClock(), engine.Options{})
	if err := errors.Join(eng.RestoreClock(ctx), eng.RestoreSettings(ctx)); err != nil {
		return nil, nil, errors.Join(err, st.Close())
	}
	return eng, func() { _ = st.Close() }, nil
}
