package sahara

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect"
)

// nodeGroupTemplate is a node group template: a flavor and the processes its instances run,
// for a plugin and version.
type nodeGroupTemplate struct {
	ID, Tenant, Name, Plugin, Version, Flavor, Description string
	Processes                                              []string
	CreatedAt                                              time.Time
}

// clusterTemplate is a cluster template: node groups made from node group templates.
type clusterTemplate struct {
	ID, Tenant, Name, Plugin, Version, Description, DefaultImage string
	NodeGroups                                                   []nodeGroupRef
	CreatedAt                                                    time.Time
}

// extra is what Sahara shows of a cluster that the cluster kind does not hold: the template
// and image it was made from, its description, and the node group template each group was
// made from (by group name).
type extra struct {
	template, image, description string
	groupTemplates               map[string]string
}

// templates holds the templates and the clusters' extras, in this process's memory: they
// have no kind of their own (see the package comment).
type templates struct {
	mu       sync.Mutex
	ngtsByID map[string]*nodeGroupTemplate
	ctsByID  map[string]*clusterTemplate
	extras   map[string]extra
}

func (s *templates) addNGT(t *nodeGroupTemplate) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.ngtsByID {
		if o.Tenant == t.Tenant && o.Name == t.Name {
			return nameTaken("Node group template", t.Name)
		}
	}
	if s.ngtsByID == nil {
		s.ngtsByID = map[string]*nodeGroupTemplate{}
	}
	s.ngtsByID[t.ID] = t
	return nil
}

func (s *templates) addCT(t *clusterTemplate) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.ctsByID {
		if o.Tenant == t.Tenant && o.Name == t.Name {
			return nameTaken("Cluster template", t.Name)
		}
	}
	if s.ctsByID == nil {
		s.ctsByID = map[string]*clusterTemplate{}
	}
	s.ctsByID[t.ID] = t
	return nil
}

func nameTaken(what, name string) error {
	return &dialect.Error{Status: http.StatusConflict, Name: "NAME_ALREADY_EXISTS",
		Message: fmt.Sprintf("%s with name '%s' already exists", what, name)}
}

// ngt is the tenant's node group template id, nil when it has none.
func (s *templates) ngt(tenant, id string) *nodeGroupTemplate {
	if t := s.ngtByID(id); t != nil && t.Tenant == tenant {
		return t
	}
	return nil
}

func (s *templates) ngtByID(id string) *nodeGroupTemplate {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ngtsByID[id]
}

// ngtNamed is the tenant's node group template named name, nil when it has none.
func (s *templates) ngtNamed(tenant, name string) *nodeGroupTemplate {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.ngtsByID {
		if t.Tenant == tenant && t.Name == name {
			return t
		}
	}
	return nil
}

func (s *templates) ct(tenant, id string) *clusterTemplate {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.ctsByID[id]; t != nil && t.Tenant == tenant {
		return t
	}
	return nil
}

// ngts are the tenant's node group templates, oldest first.
func (s *templates) ngts(tenant string) []*nodeGroupTemplate {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*nodeGroupTemplate
	for _, t := range s.ngtsByID {
		if t.Tenant == tenant {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b *nodeGroupTemplate) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out
}

// cts are the tenant's cluster templates, oldest first.
func (s *templates) cts(tenant string) []*clusterTemplate {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*clusterTemplate
	for _, t := range s.ctsByID {
		if t.Tenant == tenant {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b *clusterTemplate) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out
}

// deleteNGT deletes a node group template unless a cluster template uses it (as Sahara
// refuses it).
func (s *templates) deleteNGT(tenant, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.ngtsByID[id]
	if t == nil || t.Tenant != tenant {
		return notFound("NodeGroupTemplate", id)
	}
	for _, ct := range s.ctsByID {
		for _, g := range ct.NodeGroups {
			if g.TemplateID == id {
				return &dialect.Error{Status: http.StatusBadRequest, Name: "DELETION_FAILED",
					Message: fmt.Sprintf("Node group template %s is in use by cluster template %s: delete the cluster template first", id, ct.ID)}
			}
		}
	}
	delete(s.ngtsByID, id)
	return nil
}

func (s *templates) deleteCT(tenant, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.ctsByID[id]
	if t == nil || t.Tenant != tenant {
		return notFound("ClusterTemplate", id)
	}
	delete(s.ctsByID, id)
	return nil
}

// extra is what the dialect keeps of the cluster with engine ID id (its zero value for a
// cluster made elsewhere). Its map is shared: replace it, never change it.
func (s *templates) extra(id string) extra {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.extras[id]
}

func (s *templates) setExtra(id string, ex extra) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.extras == nil {
		s.extras = map[string]extra{}
	}
	s.extras[id] = ex
}
